/**
 * Cancelling, as every backend's cancel() gets it from here: the error a cancelled job ends with,
 * the same on every store, so that `ferry show` and a dashboard tell it apart from a failure.
 * Each backend encodes it as it stores errors (JSON text in a column or a hash field).
 */
import type { JobError } from '../../core/job.js'

export function cancelledError(): JobError {
  return { kind: 'cancelled', message: 'cancelled by an operator' }
}
