/**
 * Changing jobs that have not started, as every backend's changeJobs() gets it from here: the
 * check of a call, each change refused as enqueue refuses the same option (so a priority, a run
 * time, a payload or a maximum of attempts that enqueue would not take is never written by a
 * change either), and the rule of what state a changed job is in. The stores make each job's
 * change one atomic step with the claims, which is what keeps a job a worker holds unchanged.
 */
import { ValidationError } from '../../core/errors.js'
import { DEFAULT_MAX_PAYLOAD_BYTES, type JobState } from '../../core/job.js'
import { assertKnownKeys, optionKeys } from '../../core/option-keys.js'
import { serializePayload } from '../../core/payload.js'
import {
  assertInteger,
  MAX_ATTEMPTS_LIMIT,
  PRIORITY_MAX,
  PRIORITY_MIN,
  toInstant,
} from '../../core/validate.js'
import type { ChangeJobsParams, JobChange } from '../store.js'
import { assertInstant } from '../params.js'

/** The most jobs one call may change: each call is one atomic step, and bounded. */
export const CHANGE_JOBS_MAX = 10_000

/** The states in which a job may change: it is in line, and no worker holds it. */
export const CHANGEABLE_STATES = ['scheduled', 'ready'] as const satisfies readonly JobState[]

/** One change as a store writes it: null for a field that stays as it is. */
export interface CheckedChange {
  /** Null when the id has no form of this store's ids: it names no job ('not_found'). */
  id: string | null
  priority: number | null
  runAt: number | null
  /** JSON text, as enqueue stores a payload. */
  payload: string | null
  maxAttempts: number | null
}

const PARAMS_KEYS = optionKeys<ChangeJobsParams>({ changes: true, maxPayloadBytes: true, now: true })
const CHANGE_KEYS = optionKeys<JobChange>({
  id: true,
  priority: true,
  runAt: true,
  payload: true,
  maxAttempts: true,
})
const FIELDS = CHANGE_KEYS.filter((key) => key !== 'id')

/**
 * The changes of a changeJobs() call, checked, in order; `isJobId` is the store's own. Refuses the
 * whole call (nothing written) on any bad change.
 */
export function checkChangeJobsParams(
  params: ChangeJobsParams,
  isJobId: (id: unknown) => boolean,
): CheckedChange[] {
  assertKnownKeys(params, PARAMS_KEYS, '')
  const { changes, maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES, now } = params
  if (!Array.isArray(changes) || changes.length > CHANGE_JOBS_MAX) {
    throw new ValidationError(
      'invalid_option',
      'changes',
      `must be a list of at most ${CHANGE_JOBS_MAX} changes`,
    )
  }
  assertInteger(maxPayloadBytes, 'maxPayloadBytes', { min: 1 })
  if (now !== undefined) assertInstant(now, 'now')
  const seen = new Set<string>()
  return changes.map((change: JobChange, i) => {
    const checked = checkJobChange(change, `changes[${i}]`, { maxPayloadBytes, isJobId })
    if (seen.has(change.id)) {
      throw new ValidationError('invalid_option', `changes[${i}].id`, `names job ${change.id} twice`)
    }
    seen.add(change.id)
    return checked
  })
}

/**
 * One change checked, its fields named under `field` (`changes[3]`, or '' for a change given on
 * its own: `priority`, `payload.user`). Refuses a change that changes nothing.
 */
export function checkJobChange(
  change: JobChange,
  field: string,
  {
    maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES,
    isJobId,
  }: { maxPayloadBytes?: number; isJobId: (id: unknown) => boolean },
): CheckedChange {
  const at = (key: string): string => (field === '' ? key : `${field}.${key}`)
  assertKnownKeys(change, CHANGE_KEYS, field)
  const { id, priority, runAt, maxAttempts } = change
  if (typeof id !== 'string' || id === '') {
    throw new ValidationError('invalid_option', at('id'), 'must be the id of a job')
  }
  const given = (key: keyof JobChange): boolean => change[key] !== undefined
  if (!FIELDS.some((key) => given(key as keyof JobChange))) {
    throw new ValidationError(
      'invalid_option',
      field === '' ? 'changes' : field,
      `must change at least one of ${FIELDS.join(', ')}`,
    )
  }
  if (priority !== undefined) {
    assertInteger(priority, at('priority'), { min: PRIORITY_MIN, max: PRIORITY_MAX }, 'invalid_priority')
  }
  if (maxAttempts !== undefined) {
    assertInteger(maxAttempts, at('maxAttempts'), { min: 1, max: MAX_ATTEMPTS_LIMIT }, 'invalid_max_attempts')
  }
  return {
    id: isJobId(id) ? id : null,
    priority: priority ?? null,
    runAt: runAt === undefined ? null : toInstant(runAt, at('runAt')),
    // null is a payload like any other: only an absent one keeps the job's.
    payload: given('payload') ? serializePayload(change.payload, at('payload'), maxPayloadBytes) : null,
    maxAttempts: maxAttempts ?? null,
  }
}

/**
 * The state of a job whose run time a change set to `runAt`: ready at or before `now` (it runs
 * now, in its place by priority and run time), else scheduled. A change without a run time leaves
 * the state as it is (a scheduled job that came due is made ready by the next claim, as ever).
 */
export function stateAfterChange(runAt: number, now: number): 'ready' | 'scheduled' {
  return runAt <= now ? 'ready' : 'scheduled'
}
