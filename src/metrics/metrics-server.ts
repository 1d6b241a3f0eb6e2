/**
 * A small HTTP server for Prometheus to scrape: `GET /metrics` answers with the registry's metrics,
 * anything else with 404. What `ferry work --metrics-port` runs; an application with an HTTP
 * server of its own serves `registry.metrics()` there instead.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

import type { MetricsRegistry } from './ferry-metrics.js'

export interface MetricsServerOptions {
  registry: MetricsRegistry
  /** 0 picks a free port (see `port` on the result). */
  port: number
  /** Default 127.0.0.1: metrics stay on the machine unless asked otherwise. */
  host?: string
  /**
   * False: the server alone does not keep the process running (Node's unref), as for a command
   * whose worker is what keeps it alive, so that a failure anywhere never leaves it hanging.
   * Default true.
   */
  keepsProcessAlive?: boolean
}

export interface MetricsServer {
  /** The port listened on (the one picked, for port 0). */
  readonly port: number
  readonly host: string
  close(): Promise<void>
}

export const DEFAULT_METRICS_HOST = '127.0.0.1'

/** Listens, and resolves once listening (rejects if the address cannot be had, e.g. EADDRINUSE). */
export async function serveMetrics(options: MetricsServerOptions): Promise<MetricsServer> {
  const { registry, port, host = DEFAULT_METRICS_HOST, keepsProcessAlive = true } = options
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n')
      return
    }
    registry.metrics().then(
      (body) => response.writeHead(200, { 'content-type': registry.contentType }).end(body),
      (error: unknown) =>
        response.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${String(error)}\n`),
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  if (!keepsProcessAlive) server.unref()
  return {
    port: (server.address() as AddressInfo).port,
    host,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
