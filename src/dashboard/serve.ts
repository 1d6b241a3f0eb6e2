/**
 * The dashboard on a port of its own, as `ferry dashboard` runs it: off the network unless asked,
 * and never on it without a token.
 */
import { createServer } from 'node:http'
import { isIP } from 'node:net'

import { getRequestListener } from '@hono/node-server'

import { ValidationError } from '../core/errors.js'
import { createDashboard, type DashboardOptions } from './dashboard.js'

export const DEFAULT_DASHBOARD_PORT = 8080
export const DEFAULT_DASHBOARD_HOST = '127.0.0.1'
/** The shortest token accepted: shorter ones can be guessed, sign-in limits or not. */
export const TOKEN_MIN_LENGTH = 16

export interface ServeDashboardOptions extends Omit<DashboardOptions, 'basePath'> {
  /** Default 8080; 0 picks a free one. */
  port?: number
  /** Default 127.0.0.1. Any address that is not loopback needs a token. */
  host?: string
}

export interface ServedDashboard {
  /** Where to open it, e.g. http://127.0.0.1:8080/ */
  url: string
  port: number
  close(): Promise<void>
}

/** Whether only this machine can reach an address. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '')
  if (bare === 'localhost' || bare === '::1') return true
  return isIP(bare) === 4 && bare.startsWith('127.')
}

/**
 * Listens, and resolves once listening. Refused before anything listens: a non-loopback host without
 * a token, a token too short, a port taken or a host not of this machine (ValidationError).
 */
export async function serveDashboard(options: ServeDashboardOptions): Promise<ServedDashboard> {
  const { port = DEFAULT_DASHBOARD_PORT, host = DEFAULT_DASHBOARD_HOST, token = null } = options
  if (token !== null && token.length < TOKEN_MIN_LENGTH) {
    throw new ValidationError('invalid_option', '--token', `must be at least ${TOKEN_MIN_LENGTH} characters`)
  }
  const loopback = isLoopback(host)
  if (!loopback && token === null) {
    throw new ValidationError(
      'invalid_option',
      '--host',
      `${host} is not a loopback address: the dashboard can change jobs, so give it a token (--token or FERRY_DASHBOARD_TOKEN) before it listens there`,
    )
  }
  const dashboard = createDashboard({ ...options, token })
  const listener = getRequestListener((request) => {
    // A site that points its own name at 127.0.0.1 (DNS rebinding) reaches a loopback dashboard
    // as a same-origin page: only requests for this machine's own names are answered.
    if (loopback && !isLoopback(hostnameOf(request.headers.get('host')))) {
      return new Response('refused: this dashboard answers only for localhost', { status: 403 })
    }
    return dashboard.fetch(request)
  })
  const server = createServer(listener)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  }).catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code
    const field = code === 'EADDRINUSE' || code === 'EACCES' ? '--port' : '--host'
    throw new ValidationError(
      'invalid_option',
      field,
      `cannot listen on ${host}:${port} (${code ?? String(error)})`,
    )
  })
  const address = server.address()
  const boundPort = typeof address === 'object' && address !== null ? address.port : port
  const shownHost = host.includes(':') ? `[${host}]` : host
  return {
    url: `http://${shownHost}:${boundPort}/`,
    port: boundPort,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

/** The host name of a Host header, without its port ('' when there is none). */
function hostnameOf(header: string | null): string {
  if (header === null) return ''
  if (header.startsWith('[')) return header.slice(0, header.indexOf(']') + 1)
  const colon = header.lastIndexOf(':')
  return colon === -1 ? header : header.slice(0, colon)
}
