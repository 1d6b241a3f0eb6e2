/**
 * The worker registry's and throughput's rules, shared by every backend (store-workers.ts has
 * the contract): the checks of the four calls, how long counts are kept, and a heartbeat's counts
 * merged and ordered so that concurrent heartbeats take their locks in the same order.
 */
import { ValidationError } from '../../core/errors.js'
import { assertKnownKeys, optionKeys } from '../../core/option-keys.js'
import { assertInteger, assertName, assertQueueList } from '../../core/validate.js'
import type {
  HeartbeatParams,
  RemoveWorkerParams,
  ThroughputCount,
  ThroughputParams,
  WorkerInfo,
  WorkerJob,
  WorkerRecord,
  WorkersParams,
} from '../store-workers.js'

export const MINUTE_MS = 60_000
/** How far back the per-minute counts are kept: a day, which is what a dashboard charts. */
export const THROUGHPUT_KEEP_MS = 24 * 60 * MINUTE_MS
/** The running jobs a worker's record lists at most (activeCount has them all). */
export const WORKER_JOBS_MAX = 100
/** The most counts one heartbeat carries: a day of minutes for a few queues is far below it. */
export const HEARTBEAT_COUNTS_MAX = 10_000
/**
 * Expired worker records and counts older than a day deleted by one heartbeat, at most: each
 * heartbeat does a bounded share of the cleaning, so none takes long however much piled up.
 */
export const EXPIRED_WORKERS_PER_HEARTBEAT = 100
export const OLD_MINUTES_PER_HEARTBEAT = 1000
/** Text fields of a worker's record, bounded so a record stays small. */
const ID_MAX = 200
const HOST_MAX = 255
const STRATEGY_MAX = 64
const JOB_ID_MAX = 40

const HEARTBEAT_KEYS = optionKeys<HeartbeatParams>({ worker: true, counts: true, ttlMs: true, now: true })
const WORKER_KEYS = optionKeys<WorkerInfo>({
  workerId: true,
  host: true,
  pid: true,
  queues: true,
  concurrency: true,
  strategy: true,
  startedAt: true,
  jobs: true,
  activeCount: true,
})
const JOB_KEYS = optionKeys<WorkerJob>({ id: true, queue: true, name: true, startedAt: true })
const COUNT_KEYS = optionKeys<ThroughputCount>({ minute: true, queue: true, completed: true, failed: true })
const REMOVE_KEYS = optionKeys<RemoveWorkerParams>({ workerId: true })
const WORKERS_KEYS = optionKeys<WorkersParams>({ now: true })
const THROUGHPUT_KEYS = optionKeys<ThroughputParams>({ since: true, until: true, queue: true, now: true })

/**
 * heartbeat()'s params checked, with its counts merged (one per minute and queue, summed) and
 * ordered by minute then queue: the order every store writes them in, so two heartbeats adding
 * to the same counters never wait for each other crosswise.
 */
export function checkHeartbeatParams(params: HeartbeatParams): ThroughputCount[] {
  assertKnownKeys(params, HEARTBEAT_KEYS, '')
  checkWorkerInfo(params.worker)
  assertInteger(params.ttlMs, 'ttlMs', { min: 1, max: THROUGHPUT_KEEP_MS })
  if (params.now !== undefined) assertEpochMs(params.now, 'now')
  const { counts } = params
  if (!Array.isArray(counts))
    throw new ValidationError('invalid_option', 'counts', 'must be a list of counts')
  if (counts.length > HEARTBEAT_COUNTS_MAX) {
    throw new ValidationError('invalid_option', 'counts', `must hold at most ${HEARTBEAT_COUNTS_MAX} counts`)
  }
  const merged = new Map<string, ThroughputCount>()
  counts.forEach((count: ThroughputCount, i) => {
    const field = `counts[${i}]`
    assertKnownKeys(count, COUNT_KEYS, field)
    assertEpochMs(count.minute, `${field}.minute`)
    if (count.minute % MINUTE_MS !== 0) {
      throw new ValidationError(
        'invalid_option',
        `${field}.minute`,
        'must be a whole minute (epoch ms, a multiple of 60000)',
      )
    }
    assertName(count.queue, `${field}.queue`)
    assertInteger(count.completed, `${field}.completed`, { min: 0 })
    assertInteger(count.failed, `${field}.failed`, { min: 0 })
    const key = `${count.minute} ${count.queue}`
    const seen = merged.get(key)
    if (seen === undefined) merged.set(key, { ...count })
    else {
      seen.completed += count.completed
      seen.failed += count.failed
    }
  })
  return [...merged.values()]
    .filter((count) => count.completed > 0 || count.failed > 0)
    .sort(byMinuteAndQueue)
}

function checkWorkerInfo(worker: WorkerInfo): void {
  assertKnownKeys(worker, WORKER_KEYS, 'worker')
  assertText(worker.workerId, 'worker.workerId', ID_MAX)
  assertText(worker.host, 'worker.host', HOST_MAX)
  assertInteger(worker.pid, 'worker.pid', { min: 0 })
  assertQueueList(worker.queues, 'worker.queues')
  assertInteger(worker.concurrency, 'worker.concurrency', { min: 1 })
  assertText(worker.strategy, 'worker.strategy', STRATEGY_MAX)
  assertEpochMs(worker.startedAt, 'worker.startedAt')
  if (!Array.isArray(worker.jobs) || worker.jobs.length > WORKER_JOBS_MAX) {
    throw new ValidationError(
      'invalid_option',
      'worker.jobs',
      `must be a list of at most ${WORKER_JOBS_MAX} jobs`,
    )
  }
  worker.jobs.forEach((job: WorkerJob, i) => {
    const field = `worker.jobs[${i}]`
    assertKnownKeys(job, JOB_KEYS, field)
    assertText(job.id, `${field}.id`, JOB_ID_MAX)
    assertName(job.queue, `${field}.queue`)
    assertName(job.name, `${field}.name`, 'invalid_name')
    assertEpochMs(job.startedAt, `${field}.startedAt`)
  })
  assertInteger(worker.activeCount, 'worker.activeCount', { min: worker.jobs.length })
}

export function checkRemoveWorkerParams(params: RemoveWorkerParams): void {
  assertKnownKeys(params, REMOVE_KEYS, '')
  assertText(params.workerId, 'workerId', ID_MAX)
}

export function checkWorkersParams(params: WorkersParams): void {
  assertKnownKeys(params, WORKERS_KEYS, '')
  if (params.now !== undefined) assertEpochMs(params.now, 'now')
}

export function checkThroughputParams(params: ThroughputParams): void {
  assertKnownKeys(params, THROUGHPUT_KEYS, '')
  const { since, until, queue, now } = params
  assertEpochMs(since, 'since')
  if (until !== undefined) {
    assertEpochMs(until, 'until')
    if (until < since) throw new ValidationError('invalid_option', 'until', 'must not be before since')
    if (until - since > THROUGHPUT_KEEP_MS) {
      throw new ValidationError(
        'invalid_option',
        'until',
        `must be at most ${THROUGHPUT_KEEP_MS} ms (24 h) after since`,
      )
    }
  }
  if (queue !== undefined) assertName(queue, 'queue')
  if (now !== undefined) assertEpochMs(now, 'now')
}

/**
 * The minutes a throughput() call reads, [from, to): its range, cut to what the store keeps at
 * `now` (its clock), so that counts past a day are never answered even before a heartbeat deleted
 * them.
 */
export function throughputRange(params: ThroughputParams, now: number): { from: number; to: number } {
  return { from: Math.max(params.since, now - THROUGHPUT_KEEP_MS), to: params.until ?? now + 1 }
}

/** A worker's record from its stored info (JSON text) and heartbeat time. */
export function toWorkerRecord(info: string, heartbeatAt: number): WorkerRecord {
  return { ...(JSON.parse(info) as WorkerInfo), heartbeatAt }
}

/** The order of workers(): by host, then pid, then id. */
export function byHostAndPid(a: WorkerRecord, b: WorkerRecord): number {
  return compare(a.host, b.host) || a.pid - b.pid || compare(a.workerId, b.workerId)
}

/** The order of throughput(): by minute, then queue. */
export function byMinuteAndQueue(a: ThroughputCount, b: ThroughputCount): number {
  return a.minute - b.minute || compare(a.queue, b.queue)
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** Text of 1 to `max` characters. */
function assertText(value: unknown, field: string, max: number): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > max) {
    throw new ValidationError('invalid_option', field, `must be a string of 1 to ${max} characters`)
  }
}

/** Epoch ms, whole and not negative. */
function assertEpochMs(value: unknown, field: string): void {
  assertInteger(value, field, { min: 0 })
}
