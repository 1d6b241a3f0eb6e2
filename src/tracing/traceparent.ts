/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/), written and read by Ferry itself
 * rather than through the app's registered propagator: a job's context must be W3C whatever the
 * app propagates over HTTP, since other producers and workers (other languages, SQL inserts) read
 * and write the same field, and an app that registered no propagator would otherwise store none.
 */
import type { SpanContext } from '@opentelemetry/api'
import type { JobTraceContext } from '../core/job.js'

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/
const ZERO_TRACE_ID = '0'.repeat(32)
const ZERO_SPAN_ID = '0'.repeat(16)

/** A span's context as a job carries it. */
export function toJobTraceContext(span: SpanContext): JobTraceContext {
  const flags = span.traceFlags.toString(16).padStart(2, '0')
  const context: JobTraceContext = { traceparent: `00-${span.traceId}-${span.spanId}-${flags}` }
  const tracestate = span.traceState?.serialize()
  if (tracestate) context.tracestate = tracestate
  return context
}

/** The parts of a job's traceparent; null when it is not a valid one (ignored: tracing never fails a job). */
export function parseTraceparent(
  traceparent: unknown,
): Pick<SpanContext, 'traceId' | 'spanId' | 'traceFlags'> | null {
  if (typeof traceparent !== 'string') return null
  const match = TRACEPARENT.exec(traceparent)
  if (match === null) return null
  const [, version, traceId, spanId, flags, rest] = match
  // Version ff is invalid; version 00 has exactly four parts; later versions may add some.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null
  if (traceId === ZERO_TRACE_ID || spanId === ZERO_SPAN_ID) return null
  return { traceId: traceId!, spanId: spanId!, traceFlags: parseInt(flags!, 16) & 0xff }
}
