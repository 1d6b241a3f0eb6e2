/**
 * What a renewal or a settlement carries of a handler's reports (core/progress.ts), checked the
 * same way on every store before anything is written, and encoded as every store keeps it: the
 * progress as its JSON text, the log tail as a JSON array of strings; null for "unchanged".
 */
import { ValidationError } from '../../core/errors.js'
import { LOG_LINE_MAX_CHARS, LOG_MAX_LINES, PROGRESS_MAX_BYTES, type JobReport } from '../../core/progress.js'

/**
 * Throws a ValidationError naming `${field}.progress` or `${field}.logs` when either is malformed
 * (`field`: the path of the report, e.g. `leases[2].report`).
 */
export function checkReport(report: JobReport | undefined, field: string): void {
  if (report === undefined) return
  if (typeof report !== 'object' || report === null) {
    throw new ValidationError('invalid_option', field, 'must be an object with progress and/or logs')
  }
  const { progress, logs } = report
  if (progress !== undefined) {
    if (typeof progress !== 'string' || !isJsonText(progress)) {
      throw new ValidationError('invalid_option', `${field}.progress`, 'must be the JSON text of a value')
    }
    if (progress.length * 3 > PROGRESS_MAX_BYTES && Buffer.byteLength(progress) > PROGRESS_MAX_BYTES) {
      throw new ValidationError(
        'payload_too_large',
        `${field}.progress`,
        `is ${Buffer.byteLength(progress)} bytes of JSON, over the limit of ${PROGRESS_MAX_BYTES} bytes`,
      )
    }
  }
  if (logs !== undefined) {
    if (!Array.isArray(logs) || logs.length > LOG_MAX_LINES) {
      throw new ValidationError(
        'invalid_option',
        `${field}.logs`,
        `must be a list of at most ${LOG_MAX_LINES} lines`,
      )
    }
    logs.forEach((line: unknown, i) => {
      if (typeof line !== 'string' || line.length > LOG_LINE_MAX_CHARS) {
        throw new ValidationError(
          'invalid_option',
          `${field}.logs[${i}]`,
          `must be a string of at most ${LOG_LINE_MAX_CHARS} characters`,
        )
      }
    })
  }
}

/** A checked report as the stores write it: JSON text, null for a field that did not change. */
export function reportColumns(report: JobReport | undefined): {
  progress: string | null
  logs: string | null
} {
  if (report === undefined) return NO_REPORT
  const { progress, logs } = report
  return { progress: progress ?? null, logs: logs === undefined ? null : JSON.stringify(logs) }
}

const NO_REPORT = { progress: null, logs: null } as const

/** A job's stored progress and log text, as its Job fields. */
export function readReports(
  progress: string | null | undefined,
  logs: string | null | undefined,
): { progress: unknown; logs: string[] } {
  return {
    progress: progress == null ? null : (JSON.parse(progress) as unknown),
    logs: logs == null ? [] : (JSON.parse(logs) as string[]),
  }
}

function isJsonText(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** A renewal's reports checked, each lease's as checkReport (`leases[i].report.progress`, …). */
export function checkRenewReports(leases: readonly { report?: JobReport }[]): void {
  leases.forEach((lease, i) => checkReport(lease.report, `leases[${i}].report`))
}
