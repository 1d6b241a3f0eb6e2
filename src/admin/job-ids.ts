import { ValidationError } from '../core/errors.js'

/**
 * What a job id looks like on every store: a decimal integer from 1, at most 19 digits (SQLite's
 * largest rowid has 19). Anything else cannot name a job, so it is a usage error rather than a
 * job silently skipped: `ferry retry abc` used to say "0 jobs moved back to ready".
 */
const JOB_ID_PATTERN = /^[1-9]\d{0,18}$/

/** Checks job ids given on the command line; `field` names the argument in the error. */
export function parseJobIds(ids: readonly string[], field: string): string[] {
  for (const id of ids) {
    if (!JOB_ID_PATTERN.test(id)) {
      throw new ValidationError(
        'invalid_option',
        field,
        `${JSON.stringify(id)} is not a job id (ids are whole numbers from 1, as ferry enqueue prints them)`,
      )
    }
  }
  return [...ids]
}
