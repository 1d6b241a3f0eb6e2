// Connection failures in words that say where and why. The drivers report a refused or lost
// connection as "Connection is closed." (ioredis) or "Connection terminated unexpectedly" (pg),
// naming neither the server Ferry tried nor the operating system's reason; the PostgreSQL and
// Redis stores build their messages with these helpers instead.

/** The operating system's connection errors, in plain words. */
const OS_ERRORS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused: nothing listens on that port',
  ECONNRESET: 'connection reset by the other end',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be looked up (DNS)',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPIPE: 'the other end closed the connection',
  ENOENT: 'no such socket file',
  EACCES: 'permission denied',
}

/** Errors only an attempt to connect ends with, as opposed to a connection that broke later. */
const CONNECTING_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'])
const CONNECTING_SYSCALLS = new Set(['connect', 'getaddrinfo'])

/** `host:port` of a server URL such as `redis://cache:6380/0`, with `defaultPort` when it names none. */
export function serverAddress(url: string, defaultPort: number): string {
  try {
    const parsed = new URL(url)
    return `${parsed.hostname === '' ? 'localhost' : parsed.hostname}:${parsed.port === '' ? defaultPort : parsed.port}`
  } catch {
    return `(unparsable URL):${defaultPort}`
  }
}

export interface OsError {
  /** 'ECONNREFUSED (connection refused: nothing listens on that port)'. */
  text: string
  /** The error came from making the connection (connect, DNS), not from one already made. */
  connecting: boolean
}

/**
 * The operating system's error a driver error carries, or null when it carries none (an error of
 * the server's, or a connection closed without one). Node reports a host name with several
 * addresses that all failed as an AggregateError whose own message is empty: its first error
 * is used then.
 */
export function osErrorOf(error: unknown): OsError | null {
  const candidates = [error, ...((error as { errors?: unknown[] } | null)?.errors ?? [])]
  for (const candidate of candidates) {
    const { code, syscall } = (candidate ?? {}) as { code?: unknown; syscall?: unknown }
    if (typeof code !== 'string' || !/^E[A-Z_]+$/.test(code)) continue
    const words = OS_ERRORS[code] ?? (candidate as Error).message
    return {
      text: words === '' ? code : `${code} (${words})`,
      connecting:
        CONNECTING_CODES.has(code) || (typeof syscall === 'string' && CONNECTING_SYSCALLS.has(syscall)),
    }
  }
  return null
}
