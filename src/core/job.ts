/**
 * The job model shared by every store. Instants are epoch milliseconds (`…At`), durations are
 * milliseconds (`…Ms`); every store keeps them at millisecond precision.
 */

/**
 * - `scheduled`: waits for `runAt` (a delayed job, or a failed attempt waiting for its backoff)
 * - `ready`: may be claimed now
 * - `active`: claimed by a worker that holds its lease
 * - `completed`, `dead`: final; only an explicit retry brings a dead job back
 */
export type JobState = 'scheduled' | 'ready' | 'active' | 'completed' | 'dead'

export const JOB_STATES: readonly JobState[] = ['scheduled', 'ready', 'active', 'completed', 'dead']

/** Store-assigned, unique within a store and increasing in enqueue order (decimal digits). */
export type JobId = string

/** Why a job's last attempt did not complete: data, not only text. */
export interface JobError {
  kind:
    | 'error' // the handler threw an Error
    | 'non_error' // the handler threw something that is not an Error
    | 'timeout' // the attempt ran longer than its timeoutMs
    | 'crash' // the process or thread running it died
    | 'lease_expired' // the worker stopped renewing its lease (died, froze, lost the store)
    | 'permanent' // the handler asked for no further attempts
    | 'cancelled' // cancelled by an operator
    | 'unknown_handler' // no handler is registered for the job's name
    | 'expired' // its start deadline (expiresAt) passed before it, or its next attempt, could start
  message: string
  name?: string
  stack?: string
  exitCode?: number | null
  signal?: string | null
  stderrTail?: string
  timeoutMs?: number
}

export interface Job {
  id: JobId
  queue: string
  name: string
  payload: unknown
  state: JobState
  /** Higher runs first. */
  priority: number
  /** When the job may run (for a ready job: when it became due). */
  runAt: number
  /** Attempts started so far, the current one included. */
  attempts: number
  maxAttempts: number
  /** Per-attempt time limit; null means the worker's default. */
  timeoutMs: number | null
  uniqueKey: string | null
  /** The job's group (a tenant, a customer, an API key): what per-group limits count; null: none. */
  group: string | null
  /**
   * The start deadline, for every attempt: a job not started by then never runs, and one whose
   * retry would start later runs no more; either ends dead (cause 'expired'). An attempt that
   * started in time runs to its end.
   */
  expiresAt: number | null
  /** The schedule slot this job was fired for; null for a job enqueued otherwise. */
  schedule: JobSchedule | null
  /** The job's own retry delays, in place of its worker's backoff; null: the worker's. */
  backoff: JobBackoff | null
  /**
   * How long the job is kept once finished (Infinity: forever), in place of its queue's retention;
   * null: its queue's.
   */
  keepForMs: number | null
  /**
   * The trace context of the enqueue that made the job (docs/tracing.md), so that its attempts'
   * spans continue that trace; null when the enqueue was not traced.
   */
  trace: JobTraceContext | null
  lastError: JobError | null
  /** The handler's return value, for completed jobs. */
  result: unknown
  /**
   * The latest progress a handler reported (ctx.progress), kept across attempts: a retry reads
   * where the last attempt got to here. Null until one reports.
   */
  progress: unknown
  /** The last log lines handlers wrote (ctx.log), oldest first, across attempts (docs/progress.md). */
  logs: string[]
  /** The worker holding the lease, for active jobs. */
  workerId: string | null
  leaseExpiresAt: number | null
  createdAt: number
  updatedAt: number
  finishedAt: number | null
}

/** A job handed to a worker by `claim`; `leaseToken` fences every later write about it. */
export interface ClaimedJob extends Job {
  state: 'active'
  leaseToken: string
  leaseExpiresAt: number
  workerId: string
}

/** A validated job ready for `Store.enqueue`: payload already serialised, defaults filled in. */
export interface NewJob {
  queue: string
  name: string
  /** JSON text. */
  payload: string
  priority: number
  /** Absolute run time; when null the store adds `delayMs` to its own clock. */
  runAt: number | null
  delayMs: number
  maxAttempts: number
  timeoutMs: number | null
  uniqueKey: string | null
  /** Until when the unique key holds (docs/uniqueness.md); 'purged' for a job without a key. */
  uniqueUntil: UniqueUntil
  /** Throttle: the key holds this long from the enqueue, whatever becomes of the job; null: none. */
  uniqueForMs: number | null
  /**
   * Debounce: a later enqueue of the key, while this job has not started, replaces its payload and
   * moves its run time to that enqueue's instant plus this; null: none. The job's own run time is
   * its enqueue's instant plus this too (`delayMs` holds it).
   */
  debounceMs: number | null
  group: string | null
  /** Absolute start deadline; when null, `expiresInMs` from the store's clock (none if null too). */
  expiresAt: number | null
  expiresInMs: number | null
  schedule: JobSchedule | null
  backoff: JobBackoff | null
  /** Kept this long once finished (Infinity: forever) in place of its queue's retention; null: its queue's. */
  keepForMs: number | null
  /** The enqueue's trace context, written by the Client when tracing is on; absent or null: none. */
  trace?: JobTraceContext | null
}

/**
 * A W3C Trace Context (https://www.w3.org/TR/trace-context/) as a job carries it in its meta, never
 * in its payload: `traceparent` ("00-<trace id>-<span id>-<flags>") and `tracestate` when the trace
 * has one. Any producer may write it (a program of another language, a SQL insert), as Ferry's
 * Client does; a worker reads it back and continues that trace.
 */
export interface JobTraceContext {
  traceparent: string
  tracestate?: string
}

/**
 * When a job's unique key frees, so that an enqueue of the key makes a new job again:
 * - `purged`: when the job is purged (the default)
 * - `finished`: when it completes or ends dead (cancelled, expired, out of attempts)
 * - `started`: when a worker claims it, or it ends without starting
 */
export type UniqueUntil = 'purged' | 'finished' | 'started'

export const UNIQUE_UNTIL: readonly UniqueUntil[] = ['purged', 'finished', 'started']

/**
 * The slot of a schedule a job was fired for: the schedule's id, the slot's instant, and whether
 * the job is the late catch-up of a slot no scheduler fired in time (docs/schedules.md).
 */
export interface JobSchedule {
  id: string
  slot: number
  late: boolean
}

/**
 * A job's own delays between attempts (core/backoff.ts): a fixed delay; exponential growth from
 * `baseMs` by `factor` up to `maxMs`, with the worker's jitter; or a list of delays, one per retry,
 * the last repeated.
 */
export type JobBackoff =
  | { type: 'fixed'; delayMs: number }
  | { type: 'exponential'; baseMs: number; factor: number; maxMs: number }
  | { type: 'list'; delaysMs: number[] }

export const DEFAULT_QUEUE = 'default'
export const DEFAULT_PRIORITY = 0
export const DEFAULT_MAX_ATTEMPTS = 25
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024
