/**
 * Turns a TracingOption into a tracer, loading `@opentelemetry/api` only when tracing may be on.
 * The package is an optional peer: loaded synchronously (createRequire), because a Client is made
 * synchronously and its first enqueue must already be traced. Its CommonJS build and the app's ESM
 * import share one registration (the API keeps its global state on globalThis, by version).
 *
 * 'auto' (the default) loads it only when something has registered with it already (an SDK
 * started: a tracer provider, a context manager or a propagator), which the API marks on
 * globalThis. Without a registration every span would be a no-op, and loading the package cost a
 * worker's start-up about 22 ms of 35 (bench:peers startup on SQLite, 2026-12-07: 12.5-13.2 ms
 * with FERRY_TRACING=off against 33.6-35.6 ms with the package installed and nothing registered).
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
  if (wanted === 'auto' && !registered()) return null
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

/** The API's global state, made by its first registration (its internal/global-utils, major 1). */
const OTEL_API_GLOBAL = Symbol.for('opentelemetry.js.api.1')

/** Whether anything registered with the OpenTelemetry API of this process (an SDK started). */
function registered(): boolean {
  return (globalThis as Record<symbol, unknown>)[OTEL_API_GLOBAL] !== undefined
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
