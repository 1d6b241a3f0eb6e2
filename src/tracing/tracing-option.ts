/**
 * How a Client or a Worker is told whether to trace (docs/tracing.md). Kept apart from the code
 * that loads `@opentelemetry/api`, so that Ferry's public types never name that package: a user
 * without it installed type-checks as before.
 */

/**
 * - `true`: trace; `@opentelemetry/api` must be installed (else MissingPeerDependencyError).
 * - `false`: never trace, never load the package.
 * - an object: trace, with these settings.
 * - left out: the FERRY_TRACING environment variable decides ('on' or 'off'); without it, Ferry
 *   traces when the package is installed, and is silent when it is not.
 */
export type TracingOption = boolean | TracingOptions

export interface TracingOptions {
  /**
   * Where Ferry takes its tracer from (an OpenTelemetry TracerProvider); default the global one,
   * which the app's SDK registers.
   */
  tracerProvider?: { getTracer(name: string, version?: string): unknown }
}
