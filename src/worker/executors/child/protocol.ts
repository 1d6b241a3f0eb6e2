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
  /**
   * Run one attempt; answered by `outcome`. A child runs one at a time: one that arrives while
   * another runs (handed ahead) waits, and starts once the running one's outcome has left.
   * `startBy`: one that waited must not start past this monotonicMs() (its lease may no longer be
   * the worker's): it is given back (`withdrawn`) before that outcome leaves. process.hrtime's
   * clock is the machine's, so the parent's figure holds in a child process too.
   */
  | { type: 'run'; job: ClaimedJob; startBy?: number }
  /**
   * Abort the running attempt's signal: its timeout, a shutdown or a lost lease. Jobs waiting in
   * the child are given back (`withdrawn`): the parent retires a child whose handler was aborted.
   */
  | { type: 'abort'; jobId: string; reason: string }
  /** Give back a job handed ahead if it has not started: answered by `withdrawn`, or by its outcome. */
  | { type: 'withdraw'; jobId: string }
  /** Stop listening and exit once nothing else keeps the child alive (recycling, close). */
  | { type: 'exit' }

/** Child → parent. */
export type ChildMessage =
  | { type: 'ready'; jobNames: string[] }
  | { type: 'load-failed'; message: string }
  /** A job handed ahead, given back before it started. */
  | { type: 'withdrawn'; jobId: string }
  /** The running job's handler reported progress (its JSON text) or a log line: before its outcome. */
  | { type: 'progress'; jobId: string; progress: string }
  | { type: 'log'; jobId: string; line: string }
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

// Both sides build their messages here only, so a message reads the same wherever it is sent.

export function loadMessage(handlers: string, reportMemory: boolean): ParentMessage {
  return { type: 'load', handlers, reportMemory }
}

export function runMessage(job: ClaimedJob, startBy?: number): ParentMessage {
  // No deadline goes as none: JSON, the processes' serialization, turns Infinity into null.
  return startBy === undefined || startBy === Infinity ? { type: 'run', job } : { type: 'run', job, startBy }
}

export function abortMessage(jobId: string, reason: string): ParentMessage {
  return { type: 'abort', jobId, reason }
}

export function withdrawMessage(jobId: string): ParentMessage {
  return { type: 'withdraw', jobId }
}

export function exitMessage(): ParentMessage {
  return { type: 'exit' }
}

export function readyMessage(jobNames: Iterable<string>): ChildMessage {
  return { type: 'ready', jobNames: [...jobNames] }
}

export function loadFailedMessage(error: unknown): ChildMessage {
  return { type: 'load-failed', message: error instanceof Error ? error.message : String(error) }
}

export function withdrawnMessage(jobId: string): ChildMessage {
  return { type: 'withdrawn', jobId }
}

export function progressMessage(jobId: string, progress: string): ChildMessage {
  return { type: 'progress', jobId, progress }
}

export function logMessage(jobId: string, line: string): ChildMessage {
  return { type: 'log', jobId, line }
}

export function outcomeMessage(
  jobId: string,
  outcome: ExecutionOutcome,
  memoryBytes: number | null,
): ChildMessage {
  return { type: 'outcome', jobId, outcome, memoryBytes }
}
