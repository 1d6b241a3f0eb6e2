// The readable form of a log record, for a person at a terminal: `14:03:27 WARN  job 42 …`. The
// message says what happened with the fields that matter (the worker's messages are written to
// read whole), so the fields are left to the JSON form. Ours rather than pino-pretty: one small
// function instead of a transport and its dependencies, and the same look as the other commands.

import type { Color } from './format.js'

export type Paint = (text: string, color: Color) => string

/** What the pretty form reads of a pino record; the rest of its fields stay in the JSON form. */
export interface LogRecord {
  level: string
  /** ISO 8601, as the logger writes it. */
  time: string
  msg?: string
}

const LEVEL_COLORS: Readonly<Record<string, Color>> = {
  trace: 'dim',
  debug: 'dim',
  warn: 'yellow',
  error: 'red',
  fatal: 'red',
}

/** Local time to the second, then the level, padded so the messages line up, then the message. */
export function formatLogLine(record: LogRecord, paint: Paint): string {
  const level = record.level.toUpperCase().padEnd(5)
  const text = `${level} ${record.msg ?? ''}`
  const color = LEVEL_COLORS[record.level]
  return `${paint(clockTime(new Date(record.time)), 'dim')} ${color === undefined ? text : paint(text, color)}`
}

/** '14:03:27', local time: the lines of one session need no date. */
export function clockTime(date: Date): string {
  const pad = (n: number): string => String(n).padStart(2, '0')
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
}
