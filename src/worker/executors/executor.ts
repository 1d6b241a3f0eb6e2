import type { ClaimedJob, JobError } from '../../core/job.js'

/** One attempt to hand to an executor. */
export interface Execution {
  job: ClaimedJob
  /** Aborted when the attempt must stop early: shutdown, lost lease, cancellation. */
  signal: AbortSignal
  /** The attempt's time limit, or null for none. */
  timeoutMs: number | null
}

/**
 * What became of one attempt, as the executor saw it. The worker turns it into a settlement
 * (retry at a backoff time, dead, …): policy lives in the worker, not in executors.
 */
export type ExecutionOutcome =
  | { kind: 'completed'; result: unknown }
  /** The attempt failed; another may succeed. */
  | { kind: 'failed'; error: JobError }
  /** The handler asked to run again later without counting this attempt. */
  | { kind: 'snoozed'; delayMs: number }
  /** The handler said retrying cannot help. */
  | { kind: 'permanent'; error: JobError }
  /** `signal` was aborted before the handler finished. */
  | { kind: 'aborted' }

/**
 * Runs handlers under one execution strategy. The inline strategy runs them on the worker's own
 * event loop; the others (threads, processes, fork) isolate them.
 */
export interface Executor {
  readonly strategy: 'inline' | 'threads' | 'processes' | 'fork'
  /** Loads handlers, starts pools: everything that must happen once, before the first claim. */
  start(): Promise<void>
  /** Job names this executor can run. */
  readonly jobNames: ReadonlySet<string>
  run(execution: Execution): Promise<ExecutionOutcome>
  /** Stops pools. Attempts still running are aborted. */
  close(): Promise<void>
}
