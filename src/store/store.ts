/**
 * The Store contract: the only seam between Ferry and a backend. It is internal: the conformance
 * suite in tests/conformance/store.case.ts is its real definition, and every backend passes it.
 *
 * Shape rules: a params object in, plain data out; batch first; every write about an active job
 * is fenced by the lease token it was claimed with, and a lost lease is a per-item result, never
 * an exception; `now` (epoch ms) is optional everywhere and defaults to the store's own clock.
 */
import type { ClaimedJob, Job, JobId, JobState, NewJob } from '../core/job.js'
import type {
  FireScheduleParams,
  FireScheduleResult,
  SchedulesParams,
  SchedulesResult,
} from './store-schedules.js'

// The schedule calls' types live beside the contract, in a file of their own; this is where they
// are imported from, as every type of the contract is.
export type {
  FireScheduleParams,
  FireScheduleResult,
  Schedule,
  SchedulesParams,
  SchedulesResult,
} from './store-schedules.js'
import type { Settlement } from '../core/outcome.js'
import type { JobReport } from '../core/progress.js'
import type { ControlParams, ControlRecord, PruneParams, PruneResult } from './store-control.js'
import type {
  HeartbeatParams,
  RemoveWorkerParams,
  ThroughputCount,
  ThroughputParams,
  WorkerRecord,
  WorkersParams,
} from './store-workers.js'
// The worker registry's and throughput's types too (store-workers.ts).
export type {
  HeartbeatParams,
  RemoveWorkerParams,
  ThroughputCount,
  ThroughputParams,
  WorkerInfo,
  WorkerJob,
  WorkerRecord,
  WorkersParams,
} from './store-workers.js'
// The control calls' types too (store-control.ts).
export type {
  ControlParams,
  ControlRecord,
  PruneParams,
  PruneResult,
  QueueControl,
  QueueLimitChange,
  QueueLimits,
  QueuePause,
  QueueRetention,
  QueueRetentionChange,
  RateLimit,
} from './store-control.js'

export interface StoreCapabilities {
  /** How a waiting worker learns of work enqueued by another process. */
  crossProcessWake: 'file-watch' | 'listen-notify' | 'pubsub'
  /** Whether enqueue accepts `tx`: a transaction of the caller's own to join. */
  transactionalEnqueue: boolean
  /**
   * How the Client's group commit cuts what it gathered in one tick: at most `maxItems` jobs and
   * `maxBytes` bytes per enqueue call (one caller's enqueueMany is never split, so it stays
   * atomic) and `maxInFlight` calls at once, so a server store works on one batch while the next
   * is being encoded. Calls in flight together must commit in the order sent, so that ids follow
   * the enqueue order. `maxCallBytes` is the most one enqueue call can carry at all: the Client
   * refuses a larger enqueueMany (ValidationError, nothing written). Bytes as the Client weighs
   * a job: its payload's UTF-8, its names and unique key, and an allowance for the rest
   * (client.ts, encodedBytesOf); Infinity for no limit.
   */
  enqueueBatch: { maxItems: number; maxBytes: number; maxCallBytes: number; maxInFlight: number }
  /**
   * Whether waitForWork accepts `claim` and renew accepts `delivered`: an enqueue that finds a
   * worker waiting claims jobs for it in its own commit and sends them with the wake-up, so the
   * worker starts them without a claim of its own (one round trip and one durable write fewer
   * between an enqueue and its handler).
   */
  delivery: boolean
  /**
   * Whether listJobs accepts `payloadContains` (else a ValidationError on it): PostgreSQL, whose
   * jsonb containment answers it row by row within a page's bounded walk.
   */
  payloadSearch: boolean
}

// ── lifecycle ────────────────────────────────────────────────────────────────────────────────

export interface MigrateResult {
  /** Schema version before and after. */
  fromVersion: number
  toVersion: number
  applied: string[]
}

// ── producer ─────────────────────────────────────────────────────────────────────────────────

export interface EnqueueParams {
  jobs: readonly NewJob[]
  /**
   * Only with `capabilities.transactionalEnqueue` (else a ValidationError on `tx`): enqueue inside
   * this transaction of the caller's, so the jobs exist if and only if it commits (workers are
   * woken on commit). Such a call bypasses group commit: the caller's transaction is the batch.
   */
  tx?: CallerTransaction
  now?: number
}

/**
 * A transaction the caller holds, in the form its store accepts: for PostgreSQL, the pg Client or
 * PoolClient running the caller's BEGIN … COMMIT. Opaque to everything but that store.
 */
export type CallerTransaction = object

export interface EnqueueResult {
  id: JobId
  /** False when a job with the same uniqueKey already existed: its id is returned, nothing written. */
  created: boolean
  /**
   * Present (true) when the job was debounced (NewJob.debounceMs): the job holding the key had not
   * started, and took this enqueue's payload and run time (its id is returned, created false).
   */
  debounced?: true
}

// ── worker hot path ──────────────────────────────────────────────────────────────────────────

export interface ClaimParams {
  /** Strict order: a job of an earlier queue is always taken before any job of a later one. */
  queues: readonly string[]
  /**
   * Only jobs of these names (the handlers a worker has), in the same order as without it; jobs of
   * other names are left in line, untouched, for the workers that know them. Default: every name.
   */
  names?: readonly string[]
  /** Most jobs to take. */
  limit: number
  leaseMs: number
  workerId: string
  now?: number
}

export interface SettleParams {
  settlements: readonly Settlement[]
  /**
   * Claimed after the settlements are applied, in the same transaction and round trip (its `now`
   * is ignored): a busy worker's usual step, which costs one commit (one fsync) instead of two.
   */
  claim?: ClaimParams
  now?: number
}

export interface SettleBatchResult {
  /** One per settlement, in input order. */
  settled: SettleResult[]
  /** What `claim` took, in claim order; empty without it. */
  claimed: ClaimedJob[]
}

/**
 * - `ok`: written
 * - `lease_lost`: this worker no longer holds the job (a settlement or renewal of a stale claim)
 * - `locked`: nothing written, the job's record is locked by someone else (a PostgreSQL session
 *   outside Ferry holding its row): try again later; the lease is still this worker's
 */
export type SettleResult = 'ok' | 'lease_lost' | 'locked'

export interface RenewParams {
  leases: readonly RenewLease[]
  /** The new lease, from now. */
  leaseMs: number
  /**
   * Only with `capabilities.delivery` (else a ValidationError on `delivered`): these are jobs a
   * waitForWork was handed, with the tokens it was handed them with, and the worker takes them
   * before it starts them: 'ok' replaces the short delivery lease with the worker's own;
   * 'lease_lost' means the waiter took too long and the job went back in line (do not run it).
   */
  delivered?: boolean
  now?: number
}

/** A lease to renew, by the token of its claim. */
export interface RenewLease {
  id: JobId
  leaseToken: string
  /** What its handler reported since the last renewal: written only if the lease is renewed. */
  report?: JobReport
}

/** A lease as it was seen: the job, the token of its claim, and when the store said it expires. */
export interface LeaseSeen {
  id: JobId
  leaseToken: string
  leaseExpiresAt: number
}

export interface ExpiredLease extends LeaseSeen {
  /** The lease's length, as its claim or last renewal set it. */
  leaseMs: number
}

export interface FindExpiredLeasesParams {
  now?: number
  /** Most leases to return, oldest expiry first. Default 1000. */
  limit?: number
}

export interface FindExpiredLeasesResult {
  /** The store's clock when it looked. */
  now: number
  /** Active jobs whose lease has run out, oldest expiry first. */
  leases: ExpiredLease[]
  /** When the next lease that has not run out yet will (if it is not renewed first), or null. */
  nextExpiresAt: number | null
  /**
   * Whether some job that has not started (ready or scheduled) is past its start deadline: then
   * recoverExpired with `expireJobs` ends it. Claims end those of their queues themselves; this
   * catches the rest (a paused queue's, a queue nobody works).
   */
  startDeadlinesPassed: boolean
}

export interface RecoverParams {
  now?: number
  /** Most jobs to recover in this call (the sweep repeats while it finds more). */
  limit?: number
  /**
   * Only these leases, each if it is still exactly as seen (the same token and expiry, so not
   * renewed since) and has run out. Without it: every lease that has run out.
   */
  leases?: readonly LeaseSeen[]
  /**
   * First, in the same call, move the leases renewed at a later time than now, which only a clock
   * that went back can show: each to expire its own length from now (a dead worker's job would
   * otherwise wait for the clock to catch up). The recoverer asks for it at start and after it
   * saw the store's clock step back.
   */
  clampLeases?: boolean
  /**
   * Also end, as dead with cause 'expired', up to `limit` jobs not started by their start deadline
   * (ready or scheduled, in any queue, paused ones included).
   */
  expireJobs?: boolean
}

export interface RecoverResult {
  /** Jobs put back to run again. */
  retried: JobId[]
  /** Jobs that had no attempts left. */
  dead: JobId[]
  /** Leases moved by `clampLeases`; 0 without it. */
  clamped: number
  /** Jobs ended by `expireJobs`; empty without it. */
  expired: JobId[]
}

export interface WaitParams {
  queues: readonly string[]
  /**
   * Only jobs of these names count as work waiting (as ClaimParams.names): a worker is not woken
   * at once, again and again, by ready jobs it would not claim. Default: every name.
   */
  names?: readonly string[]
  signal?: AbortSignal
  /** Give up after this long; default: wait until something happens. */
  timeoutMs?: number
  /**
   * Only with `capabilities.delivery` (else a ValidationError on `claim`): what this waiter would
   * claim. While it waits, an enqueue may claim up to `limit` jobs of its queues and names for it,
   * exactly as claim() would (queue order, then priority, runAt, id), leased to `workerId` for
   * `leaseMs` from the enqueue's commit.
   */
  claim?: WaitClaim
}

export interface WaitClaim {
  limit: number
  leaseMs: number
  workerId: string
}

export interface WaitResult {
  /** 'delivered' when an enqueue claimed jobs for this waiter; else why the wait ended. */
  reason: WakeReason | 'delivered'
  /**
   * The jobs claimed for this waiter, in claim order: empty unless delivered. Each holds a short
   * delivery lease (DELIVERY_LEASE_MS at most) until the worker takes it (renew with `delivered`):
   * a job its waiter never takes (it froze, stalled or died) goes back in line, its attempt
   * unused, once that lease runs out.
   */
  jobs: ClaimedJob[]
}

/**
 * How long a delivered job waits for its waiter to take it (renew with `delivered`) before recoverExpired
 * puts it back, attempt unused: long enough for a busy event loop, short next to any lease.
 */
export const DELIVERY_LEASE_MS = 2000

/**
 * - `notified`: a job was enqueued (or made ready) that may be on one of the queues
 * - `due`: a scheduled job of one of the queues reached its run time
 * - `timeout`, `aborted`: as asked
 */
export type WakeReason = 'notified' | 'due' | 'timeout' | 'aborted'

// ── admin ────────────────────────────────────────────────────────────────────────────────────

export interface ListJobsParams {
  /**
   * These jobs, in the order asked; ids of no job (or of no valid form) are left out. Not with the
   * other filters or a cursor: the answer is one page (nextCursor null).
   */
  ids?: readonly JobId[]
  state?: JobState
  queue?: string
  /** Jobs of this name. */
  name?: string
  /**
   * The job holding this unique key now (at most one: a key freed by its job's end, as its
   * uniqueUntil says, is held by no job).
   */
  uniqueKey?: string
  /** Jobs enqueued at or after this instant (createdAt, epoch ms). */
  createdAfter?: number
  /** Jobs enqueued before this instant (createdAt, epoch ms). */
  createdBefore?: number
  /**
   * Jobs whose payload contains this object (PostgreSQL's jsonb `@>`: every key given, with a
   * value containing the one given). Only with `capabilities.payloadSearch`, else a
   * ValidationError on it.
   */
  payloadContains?: Record<string, unknown>
  /** Default 50, at most 1000. */
  limit?: number
  /** From a previous page's nextCursor. */
  cursor?: string
}

/** The filters of listJobs that a bulk action may select its jobs by: all but ids, limit, cursor. */
export type ListJobsFilter = Omit<ListJobsParams, 'ids' | 'limit' | 'cursor'>

/**
 * A page may be short, even empty, and still have a nextCursor: a filter that no index answers
 * (a name, a time, a payload, finished jobs of one queue) is checked on a bounded number of jobs
 * per call, so that no page costs a walk of the whole table; the cursor goes on below them.
 */
export interface JobPage {
  /** Newest first. */
  jobs: Job[]
  /** Null when no more jobs match. */
  nextCursor: string | null
}

export interface StatsParams {
  now?: number
  /** The window for the recent counts. Default 60,000 ms. */
  recentWindowMs?: number
}

export interface QueueStats {
  queue: string
  /** Ready now, including scheduled jobs whose time has come. */
  ready: number
  scheduled: number
  active: number
  completed: number
  dead: number
  /**
   * The run time (runAt, epoch ms) of the oldest ready job, when it became due: how long the queue
   * keeps work waiting (its latency) is now minus this. Null when no job is ready.
   */
  oldestReadyAt: number | null
  /** Of the dead jobs, those that were never started by their start deadline (cause 'expired'). */
  expired: number
  /** Jobs that completed, and that went dead, within the last recentWindowMs: throughput. */
  recentCompletedCount: number
  recentDeadCount: number
  recentWindowMs: number
}

export interface RetryParams {
  /** Dead jobs to run again (other ids are ignored). */
  ids?: readonly JobId[]
  /** Instead of ids: every dead job, of `queue` if given. */
  allDead?: boolean
  queue?: string
  now?: number
}

export interface CancelParams {
  ids: readonly JobId[]
  now?: number
}

export interface ChangeJobsParams {
  /** One change per job, in the order their results come back; a job named twice is refused. */
  changes: readonly JobChange[]
  /** The largest payload accepted, in bytes of JSON, as the Client's option. Default 1 MiB. */
  maxPayloadBytes?: number
  now?: number
}

/**
 * What to change of one job that has not started (scheduled or ready): each field given replaces
 * the job's, at least one must be. Checked as enqueue checks its options.
 */
export interface JobChange {
  id: JobId
  /** Integer; higher runs first. The job takes its new place in line at once. */
  priority?: number
  /**
   * Epoch ms. At or before now, the job is ready at once (a scheduled job runs now); later, it
   * waits until then (a ready job goes back to scheduled). A run time past the job's start
   * deadline (expiresAt) ends it as expired then, as for any job not started by its deadline.
   */
  runAt?: number
  /** The new payload: a JSON value, refused as enqueue refuses one. */
  payload?: unknown
  /**
   * Attempts before the job is dead, the first included. Set below the attempts already used, the
   * job still runs the attempt it is queued for (it is in line for it); a failure then ends it.
   */
  maxAttempts?: number
}

/**
 * - `ok`: changed
 * - `not_found`: no job has that id
 * - `not_changeable`: the job has started (active: its worker holds a lease on it as it is) or
 *   finished (completed, dead): nothing written
 */
export type ChangeJobResult = 'ok' | 'not_found' | 'not_changeable'

export interface ChangeJobsResult {
  /** One per change, in input order. */
  results: ChangeJobResult[]
}

export interface DeleteJobsParams {
  /** Jobs to delete; an active one (its worker holds it: cancel it first), or no job, is passed over. */
  ids: readonly JobId[]
  now?: number
}

export interface PurgeParams {
  state: 'completed' | 'dead'
  /** Only jobs that finished at least this long ago. */
  olderThanMs?: number
  queue?: string
  now?: number
}

/**
 * The 24 methods every backend implements. What a store can do beyond the common ground is said
 * by `capabilities` alone, and asked for by a param (`tx`, `claim`, `delivered`): a store without
 * the capability refuses that param with a ValidationError, so a wrapper (wrapStore) never needs
 * to know which store it wraps.
 */
export interface Store {
  readonly kind: string
  readonly capabilities: StoreCapabilities

  // lifecycle
  /** Applies pending forward-only migrations; safe to call concurrently and repeatedly. */
  migrate(): Promise<MigrateResult>
  /** Releases connections and wakes every waitForWork with 'aborted'. Idempotent. */
  close(): Promise<void>

  // producer
  /** Atomic for the batch; resolves only once the batch is durably committed. Results in input order. */
  enqueue(params: EnqueueParams): Promise<EnqueueResult[]>

  // worker hot path
  /**
   * One round trip; queue order, then priority (higher first), then runAt, then id. A paused queue
   * gives nothing and a limited one no more than its limit leaves room for, decided in the same
   * atomic step as the pick: the rest comes from the next queues of the list.
   */
  claim(params: ClaimParams): Promise<ClaimedJob[]>
  /** Settlements' results in input order, and with `claim`, the jobs claimed after them. */
  settle(params: SettleParams): Promise<SettleBatchResult>
  /** Extends leases (or takes delivered jobs); results in input order. */
  renew(params: RenewParams): Promise<SettleResult[]>
  /**
   * Resolves when work may be waiting; never a busy poll. With `claim`, an enqueue may meanwhile
   * claim jobs for this waiter (at most once per call) and hand them over. Jobs handed over just
   * as the wait ended otherwise (a race with its timeout, abort or another wake-up) are put back
   * in their place in line, their attempt unused, as a stopping worker gives back jobs it holds.
   */
  waitForWork(params: WaitParams): Promise<WaitResult>

  // maintenance: idempotent, safe to run on every worker
  /** What recoverExpired would take, and the store's clock: read only. */
  findExpiredLeases(params?: FindExpiredLeasesParams): Promise<FindExpiredLeasesResult>
  /** Active jobs whose lease ran out (all, or those given): each back to ready with the attempt
   * counted, or dead if none are left; a delivered job its waiter never took goes back to ready
   * with its attempt unused. */
  recoverExpired(params?: RecoverParams): Promise<RecoverResult>

  // admin
  /** A page of jobs, newest first, or the jobs of the ids given. */
  listJobs(params?: ListJobsParams): Promise<JobPage>
  stats(params?: StatsParams): Promise<QueueStats[]>
  /** Moves dead jobs back to ready with fresh attempts; returns how many moved. */
  retry(params: RetryParams): Promise<number>
  /** Ends scheduled, ready or active jobs as dead (cause 'cancelled'); returns how many. An active
   * job's lease is revoked, so its worker's next renew or settle reports 'lease_lost'. */
  cancel(params: CancelParams): Promise<number>
  /** Deletes finished jobs; returns how many. */
  purge(params: PurgeParams): Promise<number>
  /**
   * Deletes the jobs given that are not active (scheduled, ready, completed or dead), as purge
   * deletes (their unique keys freed, their counts and indexes kept exact); returns how many.
   */
  deleteJobs(params: DeleteJobsParams): Promise<number>
  /**
   * Changes jobs that have not started, each in one atomic step with claims: a job claimed first
   * is 'not_changeable', a job changed first is claimed as changed. Wakes the waiters of queues
   * where a change made a job ready now, as an enqueue does.
   */
  changeJobs(params: ChangeJobsParams): Promise<ChangeJobsResult>
  /**
   * Deletes one bounded batch of finished jobs past their retention (their queue's, or their own
   * keepForMs), oldest first, as purge deletes (their unique keys freed): the worker's sweep
   * repeats it while `more`. Each batch is short, so claims run between batches.
   */
  prune(params?: PruneParams): Promise<PruneResult>

  // schedules
  /**
   * Changes schedules as asked (put, remove, pause, resume, in that order, in one atomic step),
   * then reads them all. A change wakes every waiting worker, so schedulers reload at once.
   */
  schedules(params?: SchedulesParams): Promise<SchedulesResult>
  /**
   * Fires slots of a schedule, in one atomic step: moves its lastSlot from the value read to
   * toSlot and enqueues the jobs, only if the schedule is still as read (same version and
   * lastSlot) and not paused. Any number of schedulers may race for a slot: one fires it.
   */
  fireSchedule(params: FireScheduleParams): Promise<FireScheduleResult>

  // worker control
  /** Reads the workers' control record, after changing it as asked (`requestStop`, `pause`,
   * `resume`, `limit`, `retention`: at most one queue change a call). */
  control(params?: ControlParams): Promise<ControlRecord>

  // worker registry and throughput: one small write per worker per heartbeat, never per job
  /**
   * Writes the worker's record (it expires ttlMs after this heartbeat unless a next one renews
   * it) and adds `counts` into the per-minute counters (several workers' counts of one minute and
   * queue add up), in one atomic step. Counts older than THROUGHPUT_KEEP_MS (a day) are dropped,
   * and a bounded share of expired records and old counts is deleted on the way.
   */
  heartbeat(params: HeartbeatParams): Promise<void>
  /** Deletes a worker's record (a stopping worker's last call); an unknown id is no error. */
  removeWorker(params: RemoveWorkerParams): Promise<void>
  /** The workers whose record has not expired, by host, then pid. */
  workers(params?: WorkersParams): Promise<WorkerRecord[]>
  /**
   * The counts of the minutes in [since, until), oldest first, then by queue: one per minute and
   * queue that had any, of `queue` only if given. Only the last day is kept.
   */
  throughput(params: ThroughputParams): Promise<ThroughputCount[]>
}

/** The names of the Store's methods, in the order above: what wrapStore runs through its hook. */
export const STORE_METHODS = [
  'migrate',
  'close',
  'enqueue',
  'claim',
  'settle',
  'renew',
  'waitForWork',
  'findExpiredLeases',
  'recoverExpired',
  'listJobs',
  'stats',
  'retry',
  'cancel',
  'purge',
  'deleteJobs',
  'changeJobs',
  'prune',
  'schedules',
  'fireSchedule',
  'control',
  'heartbeat',
  'removeWorker',
  'workers',
  'throughput',
] as const satisfies readonly (keyof Store)[]

export type StoreMethod = (typeof STORE_METHODS)[number]
