import type { ClaimedJob, JobError } from '../../core/job.js'

/** One attempt to hand to an executor. */
export interface Execution {
  job: ClaimedJob
  /**
   * Aborted by the worker when the attempt must stop early: its timeout, shutdown, a lost lease
   * (cancellation). An executor then stops the attempt as far as its strategy allows and
   * reports 'aborted'.
   */
  abort: AttemptAbort
  /** Where the handler's ctx.progress and ctx.log go, checked and encoded; dropped without it. */
  report?: AttemptReport
}

/**
 * What a handler reports while its attempt runs (core/progress.ts), as the executor hands it on:
 * progress as its JSON text, log lines cut to their limit. The worker buffers both until the job's
 * next lease renewal or its settlement.
 */
export interface AttemptReport {
  progress(json: string): void
  log(line: string): void
}

/**
 * An attempt handed over before a slot is free for it (Executor.runNext): it starts the moment one
 * of the running attempts ends, with no round trip through the worker in between.
 */
export interface NextExecution extends Execution {
  /**
   * monotonicMs() past which it must not start any more: its lease was granted or renewed half a
   * lease before. Then it never starts, and the worker renews its lease first (JobSlots).
   */
  startBy: number
  /** Runs as it starts; its outcome then follows as run()'s does. */
  onStart: () => void
  /** Takes it back unstarted; does nothing once it has started. */
  recall: AttemptAbort
}

/**
 * An attempt's abort switch. The handler's AbortSignal is made only when the handler reads it:
 * an AbortController and its listeners per job were 11% of a no-op job's cost (bench
 * worker-throughput profile), and most handlers never look at the signal.
 */
export class AttemptAbort {
  private controller: AbortController | null = null
  private listeners: (() => void)[] = []
  private abortReason: unknown = undefined
  private isAborted = false

  get aborted(): boolean {
    return this.isAborted
  }

  get signal(): AbortSignal {
    if (this.controller === null) {
      this.controller = new AbortController()
      if (this.isAborted) this.controller.abort(this.abortReason)
    }
    return this.controller.signal
  }

  /** Runs fn when the attempt is aborted (at once if it already is). */
  onAbort(fn: () => void): void {
    if (this.isAborted) fn()
    else this.listeners.push(fn)
  }

  abort(reason: unknown): void {
    if (this.isAborted) return
    this.isAborted = true
    this.abortReason = reason
    this.controller?.abort(reason)
    const listeners = this.listeners
    this.listeners = []
    for (const fn of listeners) fn()
  }
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
  /**
   * `signal` was aborted before the handler finished. `killed` says how an isolating executor
   * stopped a child that did not answer the abort in time.
   */
  | { kind: 'aborted'; killed?: ChildExitDetail }

/** How a child process or thread ended, as recorded on its job. */
export interface ChildExitDetail {
  /** e.g. 'the process running the job was killed by SIGKILL' */
  message: string
  exitCode: number | null
  signal: string | null
  /** The last lines (at most 4 KiB) the child wrote to stderr during the attempt. */
  stderrTail: string
}

/**
 * Runs handlers under one execution strategy. The inline strategy runs them on the worker's own
 * event loop; the others (threads, processes, fork) isolate them.
 */
export interface Executor {
  readonly strategy: 'inline' | 'threads' | 'processes' | 'fork'
  /** Loads handlers, starts pools: everything that must happen once, before the first claim. */
  start(): Promise<void>
  /** Job names this executor can run (known once started). */
  readonly jobNames: ReadonlySet<string>
  /** Never rejects: every way an attempt can end is an outcome. */
  run(execution: Execution): Promise<ExecutionOutcome>
  /**
   * Optional: queues an attempt behind one that runs, to start as soon as that one ends, without
   * waiting for the worker to hear of the end and hand it over (an isolating pool sends it ahead to
   * a busy child). Null at once when there is no room for it there. The promise resolves with its
   * outcome once it started (onStart), or with null when it never did: recalled, aborted, past
   * `startBy` when its turn came, or the child it waited in died first.
   */
  runNext?(execution: NextExecution): Promise<ExecutionOutcome | null> | null
  /** Stops pools. Attempts still running are aborted. */
  close(): Promise<void>
}
