/**
 * The producer side: a PRODUCER span `send <queue>` per enqueue call (one for an enqueueMany,
 * with its job count), whose context each job keeps in its meta (Job.trace) for the worker.
 *
 * This hook sits in the Client, not around Store.enqueue (store/wrap-store.ts): group commit joins
 * many callers' jobs into one store call, made after the callers' own code has returned, where
 * neither each caller's active span nor a span per caller can be known.
 */
import type { Span } from '@opentelemetry/api'
import type { JobTraceContext, NewJob } from '../core/job.js'
import type { EnqueueResult } from '../store/store.js'
import {
  ERROR_TYPE,
  FERRY_JOB_CREATED,
  FERRY_JOB_NAME,
  MESSAGING_BATCH_MESSAGE_COUNT,
  MESSAGING_MESSAGE_ID,
  messagingAttributes,
} from './messaging-attributes.js'
import type { Tracing } from './open-tracing.js'
import { toJobTraceContext } from './traceparent.js'

export class EnqueueSpans {
  constructor(private readonly tracing: Tracing) {}

  /**
   * Runs `write` (which enqueues `jobs`) inside a send span, a child of the caller's active span:
   * each job carries the span's context, unless the span is not sampled-in at all (no SDK, or a
   * non-recording parent without a valid context), when the jobs carry none.
   */
  send<R extends EnqueueResult | EnqueueResult[]>(
    jobs: readonly NewJob[],
    batch: boolean,
    write: () => Promise<R>,
  ): Promise<R> {
    const { api, tracer } = this.tracing
    const first = jobs[0]!
    const queue = jobs.every((job) => job.queue === first.queue) ? first.queue : null
    const attributes = messagingAttributes('send', queue)
    if (batch) attributes[MESSAGING_BATCH_MESSAGE_COUNT] = jobs.length
    else attributes[FERRY_JOB_NAME] = first.name
    const span = tracer.startSpan(
      queue === null ? 'send' : `send ${queue}`,
      { kind: api.SpanKind.PRODUCER, attributes },
      api.context.active(),
    )
    const spanContext = span.spanContext()
    if (api.isSpanContextValid(spanContext)) {
      const trace: JobTraceContext = toJobTraceContext(spanContext)
      for (const job of jobs) job.trace = trace
    }
    // No SDK (the API's no-op tracer), or not sampled: nothing to end or to record, and the
    // enqueue's promise is returned as it is, without a step more.
    if (!span.isRecording()) return write()
    let written: Promise<R>
    try {
      written = write()
    } catch (error) {
      this.failed(span, error)
      throw error
    }
    return written.then(
      (result) => {
        if (!Array.isArray(result)) {
          span.setAttribute(MESSAGING_MESSAGE_ID, result.id)
          if (!result.created) span.setAttribute(FERRY_JOB_CREATED, false)
        }
        span.end()
        return result
      },
      (error: unknown) => {
        this.failed(span, error)
        throw error
      },
    )
  }

  private failed(span: Span, error: unknown): void {
    const { api } = this.tracing
    span.setAttribute(ERROR_TYPE, errorTypeOf(error))
    if (error instanceof Error) span.recordException(error)
    span.setStatus({
      code: api.SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : String(error),
    })
    span.end()
  }
}

/** A low-cardinality name of what went wrong: a FerryError's code, else the error's class. */
function errorTypeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string') return code
  return error instanceof Error ? error.name : '_OTHER'
}
