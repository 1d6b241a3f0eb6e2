// Bulk actions: one action on a selection of jobs (their ids) or on every job a listJobs filter
// matches, however many, a bounded batch at a time. Each batch is its own store call, and the
// event loop gets a turn between batches, so that a bulk action over 100,000 jobs never holds the
// store (its write lock, its rows, the Redis server) or this process for long: workers go on
// claiming throughout.
import { setImmediate as nextTurn } from 'node:timers/promises'

import { ValidationError } from '../core/errors.js'
import type { Job, JobId } from '../core/job.js'
import { assertKnownKeys } from '../core/option-keys.js'
import { assertInteger, withFieldPrefix } from '../core/validate.js'
import { checkJobChange } from '../store/kernel/change-jobs.js'
import { LIST_LIMIT_MAX } from '../store/params.js'
import type { ChangeJobsParams, JobPage, ListJobsFilter, Store } from '../store/store.js'
import { assertJobIds } from './job-ids.js'

/**
 * - `retry`: dead jobs run again with fresh attempts
 * - `cancel`: scheduled, ready and active jobs end as dead (an active job's worker loses its lease)
 * - `delete`: jobs that are not active are deleted
 * - `runNow`: scheduled jobs are ready at once
 * - `{ priority }`: jobs that have not started take this priority
 * A job in a state the action does not apply to is skipped.
 */
export type BulkAction = 'retry' | 'cancel' | 'delete' | 'runNow' | { priority: number }

export const BULK_BATCH_SIZE_DEFAULT = 1000

export interface BulkActionParams {
  action: BulkAction
  /** These jobs (ids of no job are passed over)… */
  ids?: readonly JobId[]
  /** …or, instead, every job matching this filter (`{}`: every job), found as the action goes. */
  filter?: ListJobsFilter
  /** Jobs per batch: per store call of the action. Default 1000, at most 1000. */
  batchSize?: number
  /** Stops the action between two batches: the jobs of the batches done stay changed. */
  signal?: AbortSignal
  /** Called after each batch with the totals so far. */
  onProgress?: (progress: BulkProgress) => void
  /** The instant the action runs at (epoch ms); default: the store's clock (runNow: this process's). */
  now?: number
}

export interface BulkProgress {
  /** Jobs selected so far: the ids given that name a job, or the jobs the filter matched. */
  matched: number
  /** Of those, the jobs the action was applied to. */
  done: number
  /** Of those, the jobs it changed. */
  changed: number
  /** Of those, the jobs it left as they were (in a state it does not apply to). */
  skipped: number
}

export interface BulkActionResult extends BulkProgress {
  /** True when the signal stopped the action before every selected job was done. */
  stopped: boolean
}

const PARAM_KEYS = ['action', 'ids', 'filter', 'batchSize', 'signal', 'onProgress', 'now']
const FILTER_KEYS = [
  'state',
  'queue',
  'name',
  'uniqueKey',
  'createdAfter',
  'createdBefore',
  'payloadContains',
]

/**
 * Applies `action` to the jobs of `ids` or of `filter`, a batch at a time; returns the totals.
 *
 * A filter's jobs are paged through newest first by id, each page's cursor taken before its batch
 * is changed: a change moves a job out of the filter (a retried job is no longer dead) or deletes
 * it, but never changes an id, so the pages below the cursor are the same as before the change
 * and every matching job is visited once. Jobs that come to match after the action passed their
 * place (enqueued since, or moved into the filter by someone else) are not.
 */
export async function runBulkAction(store: Store, params: BulkActionParams): Promise<BulkActionResult> {
  const { action, ids, filter, batchSize = BULK_BATCH_SIZE_DEFAULT, signal, onProgress, now } = params
  checkBulkParams(params)
  assertInteger(batchSize, 'batchSize', { min: 1, max: LIST_LIMIT_MAX })
  const totals: BulkProgress = { matched: 0, done: 0, changed: 0, skipped: 0 }
  const batches =
    ids !== undefined ? batchesOfIds(store, ids, batchSize) : batchesOfFilter(store, filter!, batchSize)
  for await (const jobs of batches) {
    if (signal?.aborted === true) return { ...totals, stopped: true }
    totals.matched += jobs.length
    const changed = jobs.length === 0 ? 0 : await apply(store, action, jobs, now)
    totals.done += jobs.length
    totals.changed += changed
    totals.skipped += jobs.length - changed
    onProgress?.({ ...totals })
    // A turn for everything else of this process (a worker's claims and settles included).
    await nextTurn()
  }
  return { ...totals, stopped: false }
}

function checkBulkParams(params: BulkActionParams): void {
  assertKnownKeys(params, PARAM_KEYS, '')
  const { action, ids, filter, signal, onProgress } = params
  if ((ids === undefined) === (filter === undefined)) {
    throw new ValidationError(
      'invalid_option',
      'ids',
      'give either ids or a filter (a filter of {} selects every job)',
    )
  }
  if (ids !== undefined) assertJobIds(ids, 'ids')
  if (filter !== undefined) {
    if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) {
      throw new ValidationError('invalid_option', 'filter', 'must be an object of listJobs filters')
    }
    assertKnownKeys(filter, FILTER_KEYS, 'filter')
  }
  if (typeof action === 'object' && action !== null) {
    assertKnownKeys(action, ['priority'], 'action')
    checkJobChange({ id: '1', priority: action.priority }, 'action', { isJobId: () => true })
  } else if (!['retry', 'cancel', 'delete', 'runNow'].includes(action)) {
    throw new ValidationError(
      'invalid_option',
      'action',
      "must be 'retry', 'cancel', 'delete', 'runNow' or { priority: n }",
    )
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new ValidationError('invalid_option', 'signal', 'must be an AbortSignal')
  }
  if (params.now !== undefined) assertInteger(params.now, 'now', { min: 0 })
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new ValidationError('invalid_option', 'onProgress', 'must be a function')
  }
}

/** The jobs of the ids given, a batch at a time, read as the batch comes. */
async function* batchesOfIds(store: Store, ids: readonly JobId[], batchSize: number): AsyncGenerator<Job[]> {
  for (let from = 0; from < ids.length; from += batchSize) {
    yield (await store.listJobs({ ids: ids.slice(from, from + batchSize) })).jobs
  }
}

/**
 * The jobs a filter matches, newest first, batchSize at a time. A store page may be short (a
 * filter checked on a bounded walk): pages are read until the batch is full or the list ends.
 */
async function* batchesOfFilter(
  store: Store,
  filter: ListJobsFilter,
  batchSize: number,
): AsyncGenerator<Job[]> {
  let cursor: string | undefined
  let first = true
  for (;;) {
    const batch: Job[] = []
    do {
      let page: JobPage
      try {
        page = await store.listJobs({
          ...filter,
          limit: batchSize - batch.length,
          ...(cursor === undefined ? {} : { cursor }),
        })
      } catch (error) {
        // The store checks the filter on the first page, before any job is changed: named as given.
        throw first && error instanceof ValidationError ? withFieldPrefix(error, 'filter') : error
      }
      first = false
      batch.push(...page.jobs)
      cursor = page.nextCursor ?? undefined
      if (page.nextCursor === null) {
        if (batch.length > 0) yield batch
        return
      }
    } while (batch.length < batchSize)
    yield batch
  }
}

/** One batch through the store call of the action; how many jobs it changed. */
async function apply(
  store: Store,
  action: BulkAction,
  jobs: readonly Job[],
  now: number | undefined,
): Promise<number> {
  const ids = jobs.map((job) => job.id)
  const at = now === undefined ? {} : { now }
  if (action === 'retry') return store.retry({ ids, ...at })
  if (action === 'cancel') return store.cancel({ ids, ...at })
  if (action === 'delete') return store.deleteJobs({ ids, ...at })
  if (action === 'runNow') {
    // Only scheduled jobs: a ready job given a run time of now would lose its place in line. The
    // store decides with the same instant, so a store clock a little behind this one does not
    // leave the job scheduled for those milliseconds.
    const runAt = now ?? Date.now()
    const scheduled = jobs.filter((job) => job.state === 'scheduled')
    return okCount(store, { changes: scheduled.map((job) => ({ id: job.id, runAt })), now: runAt })
  }
  const waiting = jobs.filter((job) => job.state === 'scheduled' || job.state === 'ready')
  return okCount(store, { changes: waiting.map((job) => ({ id: job.id, priority: action.priority })), ...at })
}

async function okCount(store: Store, params: ChangeJobsParams): Promise<number> {
  if (params.changes.length === 0) return 0
  const { results } = await store.changeJobs(params)
  return results.filter((result) => result === 'ok').length
}
