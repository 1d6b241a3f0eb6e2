// The logger of `ferry work`: pino, writing through Ferry's crash-proof stderr writer. JSON lines
// for machines (a pipe, a file, a log collector), readable lines for a person at a terminal. The
// worker itself knows nothing of it: worker-log.ts feeds it from the worker's events.

import { pino, type Logger } from 'pino'

import { ValidationError } from '../core/errors.js'
import { ferryStderr } from './fd-writer.js'
import { formatLogLine, type LogRecord, type Paint } from './pretty-log.js'

export type { Logger } from 'pino'

/** pino's levels, quietest last; `silent` logs nothing. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

export interface LoggerOptions {
  level: LogLevel
  format: 'json' | 'pretty'
  /** Colours for the pretty format (none for JSON). */
  paint: Paint
  /** Where each line goes, its newline included: fd 2 unless a test reads them. */
  destination?: (line: string) => void
}

/**
 * The level from, first to last: --log-level, --verbose (debug: a line per job), the LOG_LEVEL
 * environment variable, info. A bad value is refused, naming where it came from.
 */
export function resolveLogLevel(
  flag: string | undefined,
  verbose: boolean,
  env: string | undefined,
): LogLevel {
  if (flag !== undefined) return toLogLevel(flag, '--log-level')
  if (verbose) return 'debug'
  if (env !== undefined && env.trim() !== '') return toLogLevel(env, 'LOG_LEVEL')
  return 'info'
}

function toLogLevel(text: string, field: string): LogLevel {
  const level = LOG_LEVELS.find((known) => known === text.trim().toLowerCase())
  if (level === undefined) {
    throw new ValidationError(
      'invalid_option',
      field,
      `"${text}" is not a log level (use ${LOG_LEVELS.join(', ')})`,
    )
  }
  return level
}

/** 'auto' is pretty when the log stream (stderr) is a terminal, JSON otherwise. */
export function resolveLogFormat(text: string, stderrIsTty: boolean): 'json' | 'pretty' {
  const format = LOG_FORMATS.find((known) => known === text.trim())
  if (format === undefined) {
    throw new ValidationError(
      'invalid_option',
      '--log-format',
      `"${text}" is not a log format (use ${LOG_FORMATS.join(', ')})`,
    )
  }
  if (format === 'auto') return stderrIsTty ? 'pretty' : 'json'
  return format
}

/**
 * A logger writing one line per record to fd 2: pino's JSON (level as its name, time as ISO 8601,
 * pid and hostname in every line), or that record formatted for a person. The pretty path parses
 * the line pino just wrote: a few lines a second at most, unless a person asked for debug.
 */
export function createLogger({
  level,
  format,
  paint,
  destination = (line) => ferryStderr.write(line),
}: LoggerOptions): Logger {
  const write =
    format === 'json'
      ? destination
      : (line: string): void => destination(`${formatLogLine(JSON.parse(line) as LogRecord, paint)}\n`)
  return pino(
    {
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    { write },
  )
}
