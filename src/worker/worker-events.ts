import type { ClaimedJob, JobError } from '../core/job.js'
import type { FiredSlots } from '../scheduler/scheduler.js'
import type { RecoverResult } from '../store/store.js'
import type { RetentionSweep } from './retention-sweeper.js'

export type StopReason =
  | 'requested' // stop() was called
  | 'stop-workers' // an operator asked every worker through the store
  | 'job-limit'
  | 'time-limit'
  | 'memory-limit'
  | 'store-lost' // the store's data is gone from under the worker (see Worker.stopError)

export interface WorkerEvents {
  'worker:started': []
  'worker:stopping': [reason: StopReason]
  'worker:stopped': [reason: StopReason]
  /** A store call failed; the worker retries it, or stops if the store is gone ('store-lost'). */
  'worker:error': [error: unknown]
  'job:claimed': [job: ClaimedJob]
  'job:completed': [job: ClaimedJob, result: unknown]
  /** The attempt failed and the job will run again at retryAt. */
  'job:failed': [job: ClaimedJob, error: JobError, retryAt: number]
  'job:dead': [job: ClaimedJob, error: JobError]
  'job:snoozed': [job: ClaimedJob, runAt: number]
  /** The worker no longer holds the job (it was cancelled, or its lease expired and was recovered). */
  'job:lease-lost': [job: ClaimedJob]
  'recover:done': [result: RecoverResult]
  /** A retention sweep ended: the finished jobs it deleted, in how many batches. */
  'retention:done': [sweep: RetentionSweep]
  /** This worker's scheduler fired slots of a schedule (or passed them over: outcome 'overlap'). */
  'schedule:fired': [fire: FiredSlots]
}

export interface WorkerCounts {
  claimed: number
  completed: number
  failed: number
  dead: number
  snoozed: number
  leaseLost: number
}
