/**
 * The consumer side: a CONSUMER span `process <queue>` per attempt, from the moment the job starts
 * in a slot until its outcome is decided. Attempt 1 is a child of the enqueue's span (the context
 * its job carries); a later attempt starts a trace of its own with a link back to it, so that a
 * retry hours later neither stretches the enqueue's trace nor inherits its sampling decision. A job
 * without a context (a schedule's fire, an untraced producer) starts a trace of its own, unlinked.
 */
import type { Context, Link, Span } from '@opentelemetry/api'
import type { ClaimedJob, JobError } from '../core/job.js'
import type { Settlement } from '../core/outcome.js'
import {
  ERROR_TYPE,
  FERRY_JOB_ATTEMPT,
  FERRY_JOB_NAME,
  FERRY_JOB_OUTCOME,
  FERRY_SCHEDULE_ID,
  MESSAGING_MESSAGE_ID,
  messagingAttributes,
} from './messaging-attributes.js'
import type { Tracing } from './open-tracing.js'
import { parseTraceparent } from './traceparent.js'

/** One attempt's span. */
export interface AttemptSpan {
  /** Runs `fn` (which starts the handler) with the span active, so that the handler's own spans nest under it. */
  run<T>(fn: () => T): T
  /** Ends the span with the attempt's outcome; null: the worker lost the job's lease. */
  end(settlement: Settlement | null): void
}

export class AttemptSpans {
  constructor(private readonly tracing: Tracing) {}

  start(job: ClaimedJob): AttemptSpan {
    const { api, tracer } = this.tracing
    const attributes = messagingAttributes('process', job.queue)
    attributes[MESSAGING_MESSAGE_ID] = job.id
    attributes[FERRY_JOB_NAME] = job.name
    attributes[FERRY_JOB_ATTEMPT] = job.attempts
    if (job.schedule !== null) attributes[FERRY_SCHEDULE_ID] = job.schedule.id
    const enqueued = this.enqueueContext(job)
    const firstAttempt = job.attempts <= 1
    // Never a child of whatever context the worker's own loop runs in.
    const parent = enqueued !== null && firstAttempt ? enqueued : api.ROOT_CONTEXT
    const links: Link[] = []
    if (enqueued !== null && !firstAttempt) links.push({ context: api.trace.getSpanContext(enqueued)! })
    const span = tracer.startSpan(
      `process ${job.queue}`,
      { kind: api.SpanKind.CONSUMER, attributes, links, root: parent === api.ROOT_CONTEXT },
      parent,
    )
    const active = api.trace.setSpan(api.ROOT_CONTEXT, span)
    return {
      run: (fn) => api.context.with(active, fn),
      end: (settlement) => this.end(span, settlement),
    }
  }

  /** The enqueue's span context the job carries, as a remote parent; null for none or an invalid one. */
  private enqueueContext(job: ClaimedJob): Context | null {
    const { api } = this.tracing
    const parts = job.trace == null ? null : parseTraceparent(job.trace.traceparent)
    if (parts === null) return null
    const { tracestate } = job.trace!
    return api.trace.setSpanContext(api.ROOT_CONTEXT, {
      ...parts,
      isRemote: true,
      traceState:
        typeof tracestate === 'string' && tracestate !== '' ? api.createTraceState(tracestate) : undefined,
    })
  }

  private end(span: Span, settlement: Settlement | null): void {
    const { api } = this.tracing
    if (settlement === null) {
      span.setAttributes({ [FERRY_JOB_OUTCOME]: 'lease_lost', [ERROR_TYPE]: 'lease_lost' })
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: "the worker lost the job's lease" })
    } else {
      span.setAttribute(FERRY_JOB_OUTCOME, settlement.kind)
      if (settlement.kind === 'retry' || settlement.kind === 'dead') {
        const { error } = settlement
        span.setAttribute(ERROR_TYPE, errorTypeOf(error))
        span.recordException({ name: error.name ?? error.kind, message: error.message, stack: error.stack })
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: error.message })
      }
    }
    span.end()
  }
}

/**
 * A low-cardinality name of what went wrong: the thrown Error's class for a handler's error, else
 * the kind of failure (timeout, crash, lease_expired, permanent, unknown_handler, expired…).
 */
function errorTypeOf(error: JobError): string {
  return error.kind === 'error' && error.name !== undefined ? error.name : error.kind
}
