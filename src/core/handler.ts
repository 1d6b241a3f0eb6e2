import type { Job } from './job.js'

/** What a running handler is told about its job. */
export interface JobContext {
  /** Aborted when the attempt must stop: timeout, cancellation, or the worker shutting down. */
  signal: AbortSignal
  job: Readonly<Job>
  /** 1 for the first attempt. */
  attempt: number
  /**
   * Reports how far the job got: a number or a small JSON value (at most PROGRESS_MAX_BYTES of
   * JSON, else a ValidationError), the latest of which the job keeps, across attempts: a retry
   * finds it in `job.progress`. Buffered: it reaches the store with the next lease renewal (within
   * about a second) or the job's outcome, whichever comes first (docs/progress.md).
   */
  progress(value: unknown): void
  /**
   * Adds a line to the job's log, of which the job keeps the last LOG_MAX_LINES lines (each cut to
   * LOG_LINE_MAX_CHARS), buffered as progress is.
   */
  log(line: string): void
}

// `any` for the payload lets a map of handlers with different payload types satisfy one type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type JobHandler<P = any, R = unknown> = (payload: P, ctx: JobContext) => R | Promise<R>

/** A handler module's default export: job names mapped to handlers. */
export type JobHandlers = Record<string, JobHandler>

/**
 * Identity at run time; gives a handler module a checked type that producers can import with
 * `import type`, so `enqueue` knows each job's payload without loading handler code.
 */
export function defineJobs<const H extends JobHandlers>(handlers: H): H {
  return handlers
}

/** The payload type a handler declares. */
export type PayloadOf<H> = H extends JobHandler<infer P> ? P : never

/** Thrown by `snooze`: run the job again later without counting this attempt. */
export class JobSnooze extends Error {
  readonly delayMs: number

  constructor(delayMs: number) {
    super(`snoozed for ${delayMs} ms`)
    this.name = 'JobSnooze'
    this.delayMs = delayMs
  }
}

/** Thrown by `permanentFailure`: no further attempts, the job goes to dead. */
export class JobPermanentFailure extends Error {
  constructor(reason: string) {
    super(reason)
    this.name = 'JobPermanentFailure'
  }
}

/**
 * Ends this attempt and runs the job again after `delayMs`, without counting the attempt: for
 * work that is not ready yet (a rate limit, a resource still being prepared).
 */
export function snooze(delayMs: number): never {
  if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) {
    throw new TypeError(`snooze needs a non-negative number of milliseconds (got ${String(delayMs)})`)
  }
  throw new JobSnooze(Math.ceil(delayMs))
}

/** Ends the job as dead now, whatever attempts are left: retrying cannot help. */
export function permanentFailure(reason: string): never {
  throw new JobPermanentFailure(reason)
}
