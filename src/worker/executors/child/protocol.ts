/**
 * The messages between an isolating executor (the parent) and one child: a process or a thread.
 * Processes carry them as JSON over the IPC channel, threads by structured clone; both carry only
 * plain data. A child never talks to the store: only the parent does.
 */
import type { ClaimedJob } from '../../../core/job.js'
import type { ExecutionOutcome } from '../executor.js'

/** Parent → child. */
export type ParentMessage =
  /**
   * Load the handler module, once, before any job. Answered by `ready` or `load-failed`.
   * `reportMemory`: put `memoryBytes` on every outcome (only a pool with a memory limit needs it;
   * reading a process's RSS costs more than the rest of a no-op job in the child).
   */
  | { type: 'load'; handlers: string; reportMemory: boolean }
  /** Run one attempt. A child runs one at a time; answered by `outcome`. */
  | { type: 'run'; job: ClaimedJob }
  /** Abort the running attempt's signal: its timeout, a shutdown or a lost lease. */
  | { type: 'abort'; jobId: string; reason: string }
  /** Stop listening and exit once nothing else keeps the child alive (recycling, close). */
  | { type: 'exit' }

/** Child → parent. */
export type ChildMessage =
  | { type: 'ready'; jobNames: string[] }
  | { type: 'load-failed'; message: string }
  | {
      type: 'outcome'
      jobId: string
      outcome: ExecutionOutcome
      /**
       * What the pool's memory limit is compared with: the process's RSS, or a thread's own heap;
       * null unless the parent asked for it.
       */
      memoryBytes: number | null
    }
