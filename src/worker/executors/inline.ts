import type { JobContext, JobHandler, JobHandlers } from '../../core/handler.js'
import { encodeProgress, logLine } from '../../core/progress.js'
import { JobPermanentFailure, JobSnooze } from '../../core/handler.js'
import { toJobError } from '../../core/job-error.js'
import { loadHandlers, type HandlerSource } from '../handler-module.js'
import type { AttemptAbort, Execution, ExecutionOutcome, Executor } from './executor.js'

/**
 * Runs handlers on the worker's own event loop: the lowest overhead, and no isolation. An aborted
 * attempt (timeout, shutdown, lost lease) ends at once for the worker, but a handler that ignores
 * its signal keeps running in the background; one that blocks the event loop, calls process.exit
 * or runs out of memory takes the worker with it, and its job comes back when the lease expires.
 * Use an isolating strategy for handlers you do not trust.
 */
export class InlineExecutor implements Executor {
  readonly strategy = 'inline'
  private handlers: JobHandlers = {}
  private names = new Set<string>()
  /** Attempts in flight, so close() can end them. */
  private readonly inFlight = new Set<AttemptAbort>()

  constructor(private readonly source: HandlerSource) {}

  get jobNames(): ReadonlySet<string> {
    return this.names
  }

  async start(): Promise<void> {
    this.handlers = await loadHandlers(this.source)
    this.names = new Set(Object.keys(this.handlers))
  }

  run({ job, abort, report }: Execution): Promise<ExecutionOutcome> {
    const handler: JobHandler | undefined = Object.hasOwn(this.handlers, job.name)
      ? this.handlers[job.name]
      : undefined
    if (handler === undefined) {
      return Promise.resolve({
        kind: 'failed',
        error: { kind: 'unknown_handler', message: `no handler for job name "${job.name}" in this worker` },
      })
    }
    if (abort.aborted) return Promise.resolve({ kind: 'aborted' })
    // One promise per attempt: settled by the handler or by the abort, whichever comes first.
    this.inFlight.add(abort)
    return new Promise<ExecutionOutcome>((resolve) => {
      abort.onAbort(() => resolve({ kind: 'aborted' }))
      const ctx: JobContext = {
        job,
        attempt: job.attempts,
        get signal(): AbortSignal {
          return abort.signal
        },
        // Checked here, in the handler's own call, so a bad value throws where it was reported.
        progress: (value) => report?.progress(encodeProgress(value)),
        log: (line) => report?.log(logLine(line)),
      }
      let returned: unknown
      try {
        returned = handler(job.payload, ctx)
      } catch (thrown) {
        resolve(outcomeOfThrow(thrown))
        return
      }
      Promise.resolve(returned).then(
        (result: unknown) => resolve({ kind: 'completed', result }),
        (thrown: unknown) => resolve(outcomeOfThrow(thrown)),
      )
    }).finally(() => this.inFlight.delete(abort))
  }

  /** Ends attempts still running as aborted (their handlers are told through their signal). */
  async close(): Promise<void> {
    for (const abort of [...this.inFlight]) abort.abort(new Error('the executor is closing'))
  }
}

/** What a thrown value means: the helpers' signals, or a failure. */
export function outcomeOfThrow(thrown: unknown): ExecutionOutcome {
  if (thrown instanceof JobSnooze) return { kind: 'snoozed', delayMs: thrown.delayMs }
  if (thrown instanceof JobPermanentFailure)
    return { kind: 'permanent', error: { ...toJobError(thrown), kind: 'permanent' } }
  return { kind: 'failed', error: toJobError(thrown) }
}
