/**
 * The Store contract's control calls, control() and prune() (store.ts declares them): the workers'
 * control record (a stop request, the queues' pauses, limits and retention) and a prune batch of
 * what retention lets go. Imported through store.ts, which re-exports them with the rest of the
 * contract.
 */

export interface ControlParams {
  /**
   * First ask every running worker, in any process, to stop gracefully; waiting workers are woken
   * by it. Each request moves stopRequestedAt forward (to now, or just past the previous request).
   */
  requestStop?: boolean
  /**
   * Pause a queue: from the commit on, no claim in any process takes its jobs (ready ones, or
   * scheduled ones as they come due) until it is resumed; enqueues go on, and active jobs finish.
   * Pausing a paused queue records the new pause (its time, `by` and `reason`).
   */
  pause?: QueuePause
  /** Resume a paused queue, waking the workers waiting for it; a queue not paused is left as is. */
  resume?: { queue: string }
  /**
   * Set a queue's limits: each field given replaces that limit (null removes it), the others stay.
   * `{ queue, clear: true }` removes them all.
   */
  limit?: QueueLimitChange
  /**
   * Set how long a queue keeps its finished jobs: each field given replaces that setting (null
   * puts back its default), the others stay. `{ queue, clear: true }` puts back every default.
   */
  retention?: QueueRetentionChange
  now?: number
}

export interface QueuePause {
  queue: string
  /** Why, for whoever finds the queue paused (at most 1,000 characters). */
  reason?: string
  /** Who: a user, a host, a deploy (at most 200 characters). */
  by?: string
}

/** A queue's limits, each null when the queue has none. */
export interface QueueLimits {
  /**
   * At most this many of the queue's jobs active at once, across every worker and process: jobs
   * holding a live lease (one that ran out no longer counts), not jobs started.
   */
  concurrency: number | null
  /** At most `limit` of the queue's jobs start in any `perMs` window (a sliding window of starts). */
  rate: RateLimit | null
  /**
   * At most this many active jobs (live leases) of each group (NewJob.group) of the queue; jobs
   * without a group are held only by the queue's own limits.
   */
  groupConcurrency: number | null
  /** At most `limit` starts of each group of the queue in any `perMs` window. */
  groupRate: RateLimit | null
}

/**
 * A sliding window of starts: a job claimed at s counts against the limit while now - s < perMs,
 * so no window of perMs ever holds more than `limit` starts. A start is a claim (a delivery to a
 * waiter too), whatever becomes of the job.
 */
export interface RateLimit {
  limit: number
  perMs: number
}

export type QueueLimitChange = { queue: string } & (
  ({ clear?: false } & Partial<QueueLimits>) | { clear: true }
)

/**
 * How long a queue keeps its finished jobs before prune() deletes them, each null for its default
 * (RETENTION_DEFAULTS: completed jobs a day, dead jobs 14 days, no count limit). An age of
 * Infinity keeps them forever. A job enqueued with its own keepForMs is kept that long instead,
 * and counts against neither age nor count of its queue.
 */
export interface QueueRetention {
  /** Completed jobs are deleted this long after they finished. */
  completedMs: number | null
  /** Dead jobs are deleted this long after they finished. */
  deadMs: number | null
  /** At most this many completed jobs are kept: the newest, by finish time. */
  completedCount: number | null
  /** At most this many dead jobs are kept: the newest, by finish time. */
  deadCount: number | null
}

export type QueueRetentionChange = { queue: string } & (
  ({ clear?: false } & Partial<QueueRetention>) | { clear: true }
)

/** A queue's control settings: a queue without any is not listed. */
export interface QueueControl {
  queue: string
  /** When, by whom and why the queue was paused; null while it runs. */
  paused: { at: number; by: string | null; reason: string | null } | null
  limits: QueueLimits
  /** Each null while the queue keeps that default. */
  retention: QueueRetention
}

export interface PruneParams {
  now?: number
  /** Most jobs to delete in this call. Default 1000. */
  limit?: number
}

export interface PruneResult {
  /** Jobs deleted by this call. */
  deleted: number
  /** Whether the call stopped at its limit: more jobs past their retention may be waiting. */
  more: boolean
}

/**
 * The workers' control record: what operators ask of every worker of the store, which workers
 * read after each wake-up and about once a second.
 */
export interface ControlRecord {
  /** When workers were last asked to stop, or null. A worker stops when this changes. */
  stopRequestedAt: number | null
  /** The queues with a setting (paused, or limited), by name. */
  queues: QueueControl[]
  /** The store's schedules version (SchedulesResult.version): a scheduler reloads when it moves. */
  schedulesVersion: number
}
