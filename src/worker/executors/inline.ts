import type { JobHandler, JobHandlers } from '../../core/handler.js'
import { JobPermanentFailure, JobSnooze } from '../../core/handler.js'
import { toJobError } from '../../core/job-error.js'
import { loadHandlers, type HandlerSource } from '../handler-module.js'
import type { Execution, ExecutionOutcome, Executor } from './executor.js'

/**
 * Runs handlers on the worker's own event loop: the lowest overhead, and no isolation. A handler
 * that ignores its abort signal keeps running after a timeout (its attempt is failed and its slot
 * freed all the same); one that blocks the event loop, calls process.exit or runs out of memory
 * takes the worker with it, and its job comes back when the lease expires. Use the processes
 * strategy for handlers you do not trust.
 */
export class InlineExecutor implements Executor {
  readonly strategy = 'inline'
  private handlers: JobHandlers = {}
  private names = new Set<string>()

  constructor(private readonly source: HandlerSource) {}

  get jobNames(): ReadonlySet<string> {
    return this.names
  }

  async start(): Promise<void> {
    this.handlers = await loadHandlers(this.source)
    this.names = new Set(Object.keys(this.handlers))
  }

  async run({ job, signal, timeoutMs }: Execution): Promise<ExecutionOutcome> {
    const handler: JobHandler | undefined = Object.hasOwn(this.handlers, job.name)
      ? this.handlers[job.name]
      : undefined
    if (handler === undefined) {
      return {
        kind: 'failed',
        error: { kind: 'unknown_handler', message: `no handler for job name "${job.name}" in this worker` },
      }
    }
    // The handler's own signal: aborted by the worker (shutdown, lost lease) or by the timeout.
    const controller = new AbortController()
    const onAbort = (): void => controller.abort(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    let timer: NodeJS.Timeout | undefined
    try {
      const attempt = invoke(handler, job.payload, { signal: controller.signal, job, attempt: job.attempts })
      const stops: Promise<ExecutionOutcome>[] = [attempt]
      if (timeoutMs !== null) {
        stops.push(
          new Promise((resolve) => {
            timer = setTimeout(() => {
              const message = `timed out after ${timeoutMs} ms`
              resolve({ kind: 'failed', error: { kind: 'timeout', message, timeoutMs } })
              controller.abort(new Error(message))
            }, timeoutMs)
          }),
        )
      }
      if (signal.aborted) return { kind: 'aborted' }
      stops.push(
        new Promise((resolve) => signal.addEventListener('abort', () => resolve({ kind: 'aborted' }))),
      )
      return await Promise.race(stops)
    } finally {
      if (timer !== undefined) clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
    }
  }

  async close(): Promise<void> {}
}

async function invoke(
  handler: JobHandler,
  payload: unknown,
  ctx: Parameters<JobHandler>[1],
): Promise<ExecutionOutcome> {
  try {
    const result: unknown = await handler(payload, ctx)
    return { kind: 'completed', result }
  } catch (thrown) {
    if (thrown instanceof JobSnooze) return { kind: 'snoozed', delayMs: thrown.delayMs }
    if (thrown instanceof JobPermanentFailure) {
      return { kind: 'permanent', error: { ...toJobError(thrown), kind: 'permanent' } }
    }
    return { kind: 'failed', error: toJobError(thrown) }
  }
}
