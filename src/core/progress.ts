/**
 * What a running handler reports about its job (docs/progress.md): its progress, a small JSON
 * value of which the latest wins, and log lines, of which the job keeps a bounded tail. Both stay
 * on the job across its attempts, so a retry can read where the last one got to.
 */
import { ValidationError } from './errors.js'
import { serializePayload } from './payload.js'

/** The largest progress value, in bytes of JSON: a number, a checkpoint, a few counters. */
export const PROGRESS_MAX_BYTES = 4096
/** The log lines a job keeps: its last ones, older ones dropped as new ones come. */
export const LOG_MAX_LINES = 100
/** A longer log line is cut to this many characters (UTF-16 code units), an ellipsis last. */
export const LOG_LINE_MAX_CHARS = 1000

/**
 * What a worker sends about a running job with its lease renewal or its settlement, each field
 * only when it changed since the last one the store took. Both are written only under the job's
 * lease token, as the renewal or the settlement they ride on.
 */
export interface JobReport {
  /** JSON text of the latest progress value, at most PROGRESS_MAX_BYTES bytes. */
  progress?: string
  /** The job's whole log tail, replacing the stored one: at most LOG_MAX_LINES lines. */
  logs?: readonly string[]
}

/**
 * A progress value as the job keeps it: JSON text. Refused (a ValidationError on `progress`) when
 * JSON would change it, or past PROGRESS_MAX_BYTES.
 */
export function encodeProgress(value: unknown): string {
  return serializePayload(value, 'progress', PROGRESS_MAX_BYTES)
}

/** A log line as the job keeps it: a string, cut to LOG_LINE_MAX_CHARS. */
export function logLine(line: unknown): string {
  if (typeof line !== 'string') {
    throw new ValidationError('invalid_option', 'line', `must be a string (got ${typeof line})`)
  }
  return line.length <= LOG_LINE_MAX_CHARS ? line : `${line.slice(0, LOG_LINE_MAX_CHARS - 1)}…`
}

/** The tail after `lines`: the last LOG_MAX_LINES of both. */
export function appendLogTail(tail: readonly string[], lines: readonly string[]): string[] {
  const all = tail.concat(lines)
  return all.length <= LOG_MAX_LINES ? all : all.slice(all.length - LOG_MAX_LINES)
}
