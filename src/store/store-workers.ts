/**
 * The Store contract's worker registry and throughput calls, heartbeat(), removeWorker(),
 * workers() and throughput() (store.ts declares them): what a running worker says of itself, and
 * the jobs it settled per minute and queue, written together once every heartbeat, so that a
 * dashboard reads both without looking at a single job. Imported through store.ts, which
 * re-exports them with the rest of the contract.
 */
import type { JobId } from '../core/job.js'

/** What a running worker says of itself at every heartbeat. */
export interface WorkerInfo {
  workerId: string
  host: string
  pid: number
  queues: string[]
  concurrency: number
  /** How its handlers run: 'inline', 'threads', 'processes' or 'fork' (an executor of its own: its name). */
  strategy: string
  /** Epoch ms. */
  startedAt: number
  /** Jobs it runs now, at most WORKER_JOBS_MAX (the count of all of them is `activeCount`). */
  jobs: WorkerJob[]
  activeCount: number
}

/** A job a worker runs, as its heartbeat tells it. */
export interface WorkerJob {
  id: JobId
  queue: string
  name: string
  /** Epoch ms, when its handler started. */
  startedAt: number
}

/** A worker as the store keeps it: what its last heartbeat said, and when (the store's clock). */
export interface WorkerRecord extends WorkerInfo {
  heartbeatAt: number
}

/** Jobs settled in one minute on one queue: completed, and attempts that failed (retried or dead). */
export interface ThroughputCount {
  /** Epoch ms of the minute's start: a whole minute. */
  minute: number
  queue: string
  completed: number
  failed: number
}

export interface HeartbeatParams {
  worker: WorkerInfo
  /** Added to what the store counted for each minute and queue already (other workers' too). */
  counts: readonly ThroughputCount[]
  /** The record is gone this long after the heartbeat, unless a next one renews it. */
  ttlMs: number
  now?: number
}

export interface RemoveWorkerParams {
  workerId: string
}

export interface WorkersParams {
  now?: number
}

export interface ThroughputParams {
  /** Epoch ms: the minutes from here (inclusive)... */
  since: number
  /** ...to here (exclusive); default now. At most THROUGHPUT_KEEP_MS after since. */
  until?: number
  /** Only this queue's; default every queue's. */
  queue?: string
  now?: number
}
