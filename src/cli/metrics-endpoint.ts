/**
 * `ferry work --metrics-port`: Ferry's metrics in a registry of the command's, served on GET
 * /metrics for as long as the worker runs. Not prom-client's default process metrics: three of
 * their names (nodejs_active_handles_total …) are gauges with a counter's suffix, which promtool
 * refuses.
 */
import { ValidationError } from '../core/errors.js'
import { parseInteger } from '../core/validate.js'
import { registerFerryMetrics } from '../metrics/ferry-metrics.js'
import { DEFAULT_METRICS_HOST, serveMetrics } from '../metrics/metrics-server.js'
import { loadPromClient } from '../metrics/prom-client.js'
import type { Store } from '../store/store.js'
import type { Worker } from '../worker/worker.js'

export interface MetricsFlags {
  metricsPort?: string
  metricsHost?: string
}

export interface MetricsAddress {
  port: number
  host: string
}

/** The address the flags ask for, null without --metrics-port; bad values are refused here. */
export function metricsAddress(flags: MetricsFlags): MetricsAddress | null {
  if (flags.metricsPort === undefined) {
    if (flags.metricsHost !== undefined)
      throw new ValidationError('invalid_option', '--metrics-host', 'needs --metrics-port')
    return null
  }
  const port = parseInteger(flags.metricsPort, '--metrics-port', { min: 0, max: 65_535 })
  const host = (flags.metricsHost ?? DEFAULT_METRICS_HOST).trim()
  if (host === '') throw new ValidationError('invalid_option', '--metrics-host', 'is empty')
  return { port, host }
}

export interface MetricsEndpoint {
  /** The store to give the worker: its calls timed. */
  store: Store
  /** Where Prometheus scrapes, for the start-up line. */
  url: string
  observe(worker: Worker): void
  close(): Promise<void>
}

/** Registers the metrics and listens; a port taken or a host not of this machine is refused as bad input. */
export async function openMetricsEndpoint(
  store: Store,
  { port, host }: MetricsAddress,
): Promise<MetricsEndpoint> {
  const prom = loadPromClient()
  const registry = new prom.Registry()
  const metrics = registerFerryMetrics({ registry, store })
  const server = await serveMetrics({ registry, port, host, keepsProcessAlive: false }).catch(
    (error: unknown) => {
      metrics.close()
      const code = (error as NodeJS.ErrnoException).code
      const field = code === 'EADDRINUSE' || code === 'EACCES' ? '--metrics-port' : '--metrics-host'
      throw new ValidationError(
        'invalid_option',
        field,
        `cannot listen on ${host}:${port} (${code ?? String(error)})`,
      )
    },
  )
  const shownHost = host.includes(':') ? `[${host}]` : host
  return {
    store: metrics.instrumentStore(store),
    url: `http://${shownHost}:${server.port}/metrics`,
    observe: (worker) => metrics.observeWorker(worker),
    async close() {
      await server.close()
      metrics.close()
    },
  }
}
