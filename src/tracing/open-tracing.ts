/**
 * Turns a TracingOption into a tracer, loading `@opentelemetry/api` only when tracing may be on.
 * The package is an optional peer: loaded synchronously (createRequire), because a Client is made
 * synchronously and its first enqueue must already be traced. Its CommonJS build and the app's ESM
 * import share one registration (the API keeps its global state on globalThis, by version).
 */
import { createRequire } from 'node:module'
import type * as OpenTelemetryApi from '@opentelemetry/api'
import { MissingPeerDependencyError, ValidationError } from '../core/errors.js'
import type { TracingOption } from './tracing-option.js'

export type OtelApi = typeof OpenTelemetryApi

/** What a Client or a Worker traces with. */
export interface Tracing {
  api: OtelApi
  tracer: OpenTelemetryApi.Tracer
}

export const OTEL_API_PACKAGE = '@opentelemetry/api'
/** The instrumentation scope of Ferry's spans. */
export const TRACER_NAME = 'ferry'

/** Loads the API package, or throws what `require` throws (MODULE_NOT_FOUND when it is missing). */
export type OtelApiLoader = () => OtelApi

const requireApi: OtelApiLoader = () => createRequire(import.meta.url)(OTEL_API_PACKAGE) as OtelApi

/**
 * The tracing the option asks for (tracing-option.ts), or null for none. `field` names the option
 * in errors; `load` is replaceable so that tests can play a missing package.
 */
export function openTracing(
  option: TracingOption | undefined,
  field: string,
  load: OtelApiLoader = requireApi,
): Tracing | null {
  const wanted = option ?? tracingFromEnv()
  if (wanted === false) return null
  if (wanted !== true && wanted !== 'auto' && (typeof wanted !== 'object' || wanted === null)) {
    throw new ValidationError('invalid_option', field, 'must be true, false or { tracerProvider }')
  }
  let api: OtelApi
  try {
    api = load()
  } catch (error) {
    if (!isModuleNotFound(error)) throw error
    if (wanted === 'auto') return null
    throw new MissingPeerDependencyError(OTEL_API_PACKAGE, 'tracing', { cause: error })
  }
  const provider = typeof wanted === 'object' ? wanted.tracerProvider : undefined
  if (provider !== undefined && typeof provider?.getTracer !== 'function') {
    throw new ValidationError('invalid_option', `${field}.tracerProvider`, 'must be a TracerProvider')
  }
  const tracer = (provider ?? api.trace.getTracerProvider()).getTracer(TRACER_NAME) as OpenTelemetryApi.Tracer
  return { api, tracer }
}

/** FERRY_TRACING: 'on' (or 1, true), 'off' (or 0, false); unset or empty: 'auto'. */
function tracingFromEnv(): boolean | 'auto' {
  const value = (process.env.FERRY_TRACING ?? '').trim().toLowerCase()
  if (value === '') return 'auto'
  if (value === 'on' || value === '1' || value === 'true') return true
  if (value === 'off' || value === '0' || value === 'false') return false
  throw new ValidationError('invalid_option', 'FERRY_TRACING', `must be on or off, not "${value}"`)
}

function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND'
}
