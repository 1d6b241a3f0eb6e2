import { ValidationError } from '../core/errors.js'
import type { JobId } from '../core/job.js'

/**
 * What a job id looks like on every store: a decimal integer from 1, at most 19 digits (SQLite's
 * largest rowid has 19). Anything else cannot name a job, so it is refused rather than skipped:
 * `ferry retry abc` used to say "0 jobs moved back to ready".
 */
const JOB_ID_PATTERN = /^[1-9]\d{0,18}$/

/** Refuses anything but a list of job ids; `field` names the list in the error. */
export function assertJobIds(ids: unknown, field: string): asserts ids is readonly JobId[] {
  if (!Array.isArray(ids)) throw new ValidationError('invalid_option', field, 'must be an array of job ids')
  for (const id of ids) {
    if (typeof id !== 'string' || !JOB_ID_PATTERN.test(id)) {
      throw new ValidationError(
        'invalid_option',
        field,
        `${JSON.stringify(id)} is not a job id (ids are whole numbers from 1, as ferry enqueue prints them)`,
      )
    }
  }
}
