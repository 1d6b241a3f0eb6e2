/**
 * The argument checks of the Store contract, shared by every backend so that a bad call gets the
 * same typed error whichever store runs it. What differs per store (the id's width, the driver's
 * errors) stays in the store.
 */
import { ValidationError } from '../core/errors.js'
import { JOB_STATES } from '../core/job.js'
import {
  assertInteger,
  assertKeepMs,
  assertName,
  assertQueueList,
  assertUniqueKey,
} from '../core/validate.js'
import { assertKnownKeys, optionKeys } from '../core/option-keys.js'
import type {
  CancelParams,
  ClaimParams,
  ControlParams,
  DeleteJobsParams,
  ListJobsParams,
  QueueLimits,
  QueuePause,
  RateLimit,
  PruneParams,
  PurgeParams,
  QueueRetention,
  RetryParams,
  StatsParams,
} from './store.js'

export const LIST_LIMIT_DEFAULT = 50
export const LIST_LIMIT_MAX = 1000
export const RECOVER_LIMIT_DEFAULT = 1000

export function checkClaimParams({ queues, names, limit, leaseMs, workerId }: ClaimParams): void {
  assertQueueList(queues)
  checkNames(names)
  assertInteger(limit, 'limit', { min: 1 })
  assertInteger(leaseMs, 'leaseMs', { min: 1 })
  if (typeof workerId !== 'string' || workerId === '') {
    throw new ValidationError('invalid_option', 'workerId', 'must be a non-empty string')
  }
}

// The admin calls' parameters, each checked for unknown keys: a misspelt filter must not widen what
// the call touches (`purge({ state: 'dead', olderThan: … })` would otherwise delete every dead job).
const LIST_JOBS_KEYS = optionKeys<ListJobsParams>({
  ids: true,
  state: true,
  queue: true,
  name: true,
  uniqueKey: true,
  createdAfter: true,
  createdBefore: true,
  payloadContains: true,
  limit: true,
  cursor: true,
})
const STATS_KEYS = optionKeys<StatsParams>({ now: true, recentWindowMs: true })
const RETRY_KEYS = optionKeys<RetryParams>({ ids: true, allDead: true, queue: true, now: true })
const CANCEL_KEYS = optionKeys<CancelParams>({ ids: true, now: true })
const DELETE_JOBS_KEYS = optionKeys<DeleteJobsParams>({ ids: true, now: true })
const PURGE_KEYS = optionKeys<PurgeParams>({ state: true, olderThanMs: true, queue: true, now: true })
const CONTROL_KEYS = optionKeys<ControlParams>({
  requestStop: true,
  pause: true,
  resume: true,
  limit: true,
  retention: true,
  now: true,
})
const PRUNE_KEYS = optionKeys<PruneParams>({ now: true, limit: true })
const PAUSE_KEYS = optionKeys<QueuePause>({ queue: true, reason: true, by: true })
const LIMIT_KEYS = [
  'queue',
  'clear',
  'concurrency',
  'rate',
  'groupConcurrency',
  'groupRate',
] as const satisfies readonly (keyof QueueLimits | 'queue' | 'clear')[]
const RETENTION_KEYS = [
  'queue',
  'clear',
  'completedMs',
  'deadMs',
  'completedCount',
  'deadCount',
] as const satisfies readonly (keyof QueueRetention | 'queue' | 'clear')[]
/** The most jobs a count limit may keep per queue and state; no count limit keeps any number. */
export const RETENTION_COUNT_MAX = 1_000_000_000
export const PRUNE_LIMIT_DEFAULT = 1000
/** A prune's batch is one transaction or script: bounded, so that claims never wait long for it. */
export const PRUNE_LIMIT_MAX = 10_000
/** A pause's reason and author: text for people, bounded so a control record stays small. */
export const PAUSE_REASON_MAX = 1000
export const PAUSE_BY_MAX = 200
/** The largest limit a queue may have: beyond it, no limit is the honest setting. */
export const QUEUE_LIMIT_MAX = 1_000_000
/** The longest rate window: a day. Longer budgets are quotas, kept better by the application. */
export const RATE_WINDOW_MAX_MS = 86_400_000

/**
 * A claim's or a wait's `names` filter: absent (every name), or a non-empty list of job names
 * without repeats. An empty list would claim nothing, ever: a worker without handlers is a mistake
 * to report, not a filter.
 */
export function checkNames(names: readonly string[] | undefined): void {
  if (names === undefined) return
  if (!Array.isArray(names) || names.length === 0) {
    throw new ValidationError('invalid_name', 'names', 'must be a non-empty list of job names, or left out')
  }
  const seen = new Set<string>()
  names.forEach((name, i) => {
    assertName(name, `names[${i}]`, 'invalid_name')
    if (seen.has(name)) throw new ValidationError('invalid_name', `names[${i}]`, `"${name}" is listed twice`)
    seen.add(name)
  })
}

/** The most bytes of JSON a payloadContains filter may take: a filter, not a document. */
export const PAYLOAD_FILTER_MAX_BYTES = 64 * 1024

/**
 * listJobs's filters as checked: each absent one undefined, the default limit filled in, and
 * payloadContains as JSON text.
 */
export interface CheckedListFilters {
  ids?: undefined
  state: ListJobsParams['state']
  queue: string | undefined
  name: string | undefined
  uniqueKey: string | undefined
  createdAfter: number | undefined
  createdBefore: number | undefined
  payloadContains: string | undefined
  limit: number
  cursor: string | undefined
}

/** What listJobs's checks need to know of the store that runs them. */
export interface ListJobsStore {
  kind: string
  isJobId: (id: unknown) => boolean
  /** capabilities.payloadSearch */
  payloadSearch: boolean
}

/**
 * listJobs's filters checked: either the ids asked for, those of no valid form left out, or the
 * filters with the default limit filled in.
 */
export function checkListJobsParams(
  params: ListJobsParams,
  { kind, isJobId, payloadSearch }: ListJobsStore,
): { ids: string[] } | CheckedListFilters {
  assertKnownKeys(params, LIST_JOBS_KEYS, '')
  const { ids, state, queue, name, uniqueKey, createdAfter, createdBefore, payloadContains } = params
  const { limit = LIST_LIMIT_DEFAULT, cursor } = params
  if (ids !== undefined) {
    if (!Array.isArray(ids)) throw new ValidationError('invalid_option', 'ids', 'must be an array of job ids')
    const others = Object.keys(params).filter(
      (key) => key !== 'ids' && params[key as keyof ListJobsParams] !== undefined,
    )
    if (others.length > 0) {
      throw new ValidationError(
        'invalid_option',
        'ids',
        `lists exactly the jobs asked for: it cannot be combined with ${others.join(', ')}`,
      )
    }
    return { ids: ids.filter((id): id is string => isJobId(id)) }
  }
  if (state !== undefined && !JOB_STATES.includes(state)) {
    throw new ValidationError('invalid_option', 'state', `must be one of ${JOB_STATES.join(', ')}`)
  }
  if (queue !== undefined) assertName(queue, 'queue')
  if (name !== undefined) assertName(name, 'name', 'invalid_name')
  if (uniqueKey !== undefined) assertUniqueKey(uniqueKey, 'uniqueKey')
  if (createdAfter !== undefined) assertEpochMs(createdAfter, 'createdAfter')
  if (createdBefore !== undefined) assertEpochMs(createdBefore, 'createdBefore')
  assertInteger(limit, 'limit', { min: 1, max: LIST_LIMIT_MAX })
  if (cursor !== undefined && !isJobId(cursor)) {
    throw new ValidationError('invalid_option', 'cursor', 'is not a cursor returned by listJobs')
  }
  return {
    state,
    queue,
    name,
    uniqueKey,
    createdAfter,
    createdBefore,
    payloadContains:
      payloadContains === undefined ? undefined : payloadFilter(payloadContains, kind, payloadSearch),
    limit,
    cursor,
  }
}

/** An instant of a filter: epoch milliseconds, an integer (as every stored time is). */
function assertEpochMs(value: unknown, field: string): void {
  if (!Number.isSafeInteger(value)) {
    throw new ValidationError('invalid_option', field, 'must be epoch milliseconds (an integer)')
  }
}

/** payloadContains as the JSON text a containment test takes, or the store's refusal. */
function payloadFilter(value: unknown, kind: string, payloadSearch: boolean): string {
  if (!payloadSearch) {
    throw new ValidationError(
      'invalid_option',
      'payloadContains',
      `the ${kind} store cannot search payloads (capabilities.payloadSearch is false; PostgreSQL can)`,
    )
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError('invalid_option', 'payloadContains', 'must be an object of the keys to match')
  }
  let text: string
  try {
    text = JSON.stringify(value)
  } catch (error) {
    throw new ValidationError('invalid_option', 'payloadContains', `is not JSON: ${messageOf(error)}`)
  }
  // U+0000 has no place in PostgreSQL text: the filter would fail there, not match nothing.
  if (Buffer.byteLength(text) > PAYLOAD_FILTER_MAX_BYTES || text.includes('\\u0000')) {
    throw new ValidationError(
      'invalid_option',
      'payloadContains',
      `must be JSON of at most ${PAYLOAD_FILTER_MAX_BYTES} bytes, without U+0000`,
    )
  }
  return text
}

/** Whether a checked filter asks for something beyond state and queue, which no index orders by id. */
export function hasResidualFilter(filters: CheckedListFilters): boolean {
  return (
    filters.name !== undefined ||
    filters.createdAfter !== undefined ||
    filters.createdBefore !== undefined ||
    filters.payloadContains !== undefined
  )
}

export function checkStatsParams(params: StatsParams): void {
  assertKnownKeys(params, STATS_KEYS, '')
  assertDurationMs(params.recentWindowMs ?? 0, 'recentWindowMs')
}

export function checkRetryParams(params: RetryParams): void {
  assertKnownKeys(params, RETRY_KEYS, '')
  const { ids, allDead = false, queue } = params
  if ((ids === undefined) === !allDead) {
    throw new ValidationError('invalid_option', 'ids', 'give either ids or allDead: true')
  }
  if (queue !== undefined) assertName(queue, 'queue')
}

export function checkCancelParams(params: CancelParams): void {
  assertKnownKeys(params, CANCEL_KEYS, '')
  if (!Array.isArray(params.ids))
    throw new ValidationError('invalid_option', 'ids', 'must be an array of job ids')
}

export function checkDeleteJobsParams(params: DeleteJobsParams): void {
  assertKnownKeys(params, DELETE_JOBS_KEYS, '')
  if (!Array.isArray(params.ids))
    throw new ValidationError('invalid_option', 'ids', 'must be an array of job ids')
}

export function checkPurgeParams(params: PurgeParams): void {
  assertKnownKeys(params, PURGE_KEYS, '')
  const { state, olderThanMs = 0, queue } = params
  if (state !== 'completed' && state !== 'dead') {
    throw new ValidationError('invalid_option', 'state', "must be 'completed' or 'dead'")
  }
  assertDurationMs(olderThanMs, 'olderThanMs')
  if (queue !== undefined) assertName(queue, 'queue')
}

export function checkControlParams(params: ControlParams): void {
  assertKnownKeys(params, CONTROL_KEYS, '')
  const changes = (['pause', 'resume', 'limit', 'retention'] as const).filter(
    (key) => params[key] !== undefined,
  )
  if (changes.length > 1) {
    throw new ValidationError(
      'invalid_option',
      changes[1]!,
      `one queue change a call: ${changes.join(' and ')} were both given`,
    )
  }
  const { pause, resume, limit, retention } = params
  if (retention !== undefined) checkRetentionChange(retention)
  if (pause !== undefined) {
    assertKnownKeys(pause, PAUSE_KEYS, 'pause')
    assertName(pause.queue, 'pause.queue')
    assertText(pause.reason, 'pause.reason', PAUSE_REASON_MAX)
    assertText(pause.by, 'pause.by', PAUSE_BY_MAX)
  }
  if (resume !== undefined) {
    assertKnownKeys(resume, ['queue'], 'resume')
    assertName(resume.queue, 'resume.queue')
  }
  if (limit !== undefined && !isClear(limit, LIMIT_KEYS, 'limit', 'a limit')) {
    for (const key of ['concurrency', 'groupConcurrency'] as const) {
      const value = limit[key]
      if (value !== null && value !== undefined) {
        assertInteger(value, `limit.${key}`, { min: 1, max: QUEUE_LIMIT_MAX })
      }
    }
    for (const key of ['rate', 'groupRate'] as const) {
      const value = limit[key]
      if (value !== null && value !== undefined) checkRate(value, `limit.${key}`)
    }
  }
}

/**
 * What a queue change that sets fields or clears them all (limit, retention) must be: known keys,
 * a queue name, and either `clear: true` alone or at least one field. Returns whether it clears.
 */
function isClear<Change extends { queue: string; clear?: boolean }>(
  change: Change,
  keys: readonly string[],
  field: string,
  what: string,
): change is Extract<Change, { clear: true }> {
  assertKnownKeys(change, keys, field)
  assertName(change.queue, `${field}.queue`)
  if (change.clear !== undefined && typeof change.clear !== 'boolean') {
    throw new ValidationError('invalid_option', `${field}.clear`, 'must be true or false')
  }
  const settings = keys.filter((key) => key !== 'queue' && key !== 'clear')
  const given = settings.filter((key) => key in change)
  if (change.clear === true && given.length > 0) {
    throw new ValidationError('invalid_option', `${field}.${given[0]!}`, 'cannot be set together with clear')
  }
  if (change.clear !== true && given.length === 0) {
    throw new ValidationError(
      'invalid_option',
      field,
      `must set ${what} (${settings.join(', ')}) or clear them`,
    )
  }
  return change.clear === true
}

function checkRetentionChange(retention: NonNullable<ControlParams['retention']>): void {
  if (isClear(retention, RETENTION_KEYS, 'retention', 'a retention')) return
  for (const key of ['completedMs', 'deadMs'] as const) {
    const value = retention[key]
    if (value !== null && value !== undefined) assertKeepMs(value, `retention.${key}`)
  }
  for (const key of ['completedCount', 'deadCount'] as const) {
    const value = retention[key]
    if (value !== null && value !== undefined) {
      assertInteger(value, `retention.${key}`, { min: 0, max: RETENTION_COUNT_MAX })
    }
  }
}

/** prune()'s params checked, its default limit filled in. */
export function checkPruneParams(params: PruneParams): { now: number | undefined; limit: number } {
  assertKnownKeys(params, PRUNE_KEYS, '')
  const { now, limit = PRUNE_LIMIT_DEFAULT } = params
  assertInteger(limit, 'limit', { min: 1, max: PRUNE_LIMIT_MAX })
  return { now, limit }
}

function checkRate(rate: RateLimit, field: string): void {
  assertKnownKeys(rate, ['limit', 'perMs'], field)
  assertInteger(rate.limit, `${field}.limit`, { min: 1, max: QUEUE_LIMIT_MAX })
  assertInteger(rate.perMs, `${field}.perMs`, { min: 1, max: RATE_WINDOW_MAX_MS })
}

/** Optional text of at most `max` characters. */
function assertText(value: unknown, field: string, max: number): void {
  if (value === undefined) return
  if (typeof value !== 'string' || value.length > max) {
    throw new ValidationError('invalid_option', field, `must be text of at most ${max} characters`)
  }
}

/**
 * The `tx` of an enqueue on a store that cannot join the caller's transaction: the Client refuses
 * it before it reaches the store, and the store refuses it the same way when called directly.
 */
export function transactionRefused(kind: string): ValidationError {
  return new ValidationError(
    'invalid_option',
    'tx',
    `the ${kind} store cannot enqueue inside a transaction of yours (PostgreSQL can)`,
  )
}

/** `claim` on a wait, or `delivered` on a renew, to a store without `capabilities.delivery`. */
export function deliveryRefused(kind: string, field: 'claim' | 'delivered'): ValidationError {
  return new ValidationError(
    'invalid_option',
    field,
    `the ${kind} store does not hand jobs to waiting workers (capabilities.delivery is false)`,
  )
}

/** A claim's limit, a lease's length: the stores' most frequent integer check, named once. */
/** A non-negative number of milliseconds (a window, an age). */
export function assertDurationMs(value: unknown, field: string): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new ValidationError('invalid_option', field, 'must be a non-negative number of milliseconds')
  }
}

export function assertInstant(value: unknown, field: string): void {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new ValidationError('invalid_run_at', field, 'must be epoch milliseconds')
  }
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
