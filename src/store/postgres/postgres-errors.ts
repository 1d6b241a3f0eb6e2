/**
 * What a pg error says, for the StoreUnavailableError it becomes (kernel/driver-errors.ts). A
 * connection that failed or broke names the server (host:port) and the operating system's error:
 * pg's own message for a refused connection to `localhost` is empty, and for a port where
 * something else accepts and hangs up it is only "Connection terminated unexpectedly".
 */
import { osErrorOf } from '../connection-error.js'
import { wrapDriverError } from '../kernel/driver-errors.js'

export function postgresError(error: unknown, server: string): unknown {
  return wrapDriverError(error, (error) => describe(error, server))
}

function describe(error: unknown, server: string): string | null {
  if (!(error instanceof Error)) return null
  const os = osErrorOf(error)
  if (os !== null) {
    return os.connecting
      ? `cannot connect to PostgreSQL at ${server}: ${os.text}`
      : `PostgreSQL at ${server}: the connection failed: ${os.text}`
  }
  if (error.message === 'Connection terminated unexpectedly') {
    return (
      `PostgreSQL at ${server} closed the connection (${error.message}): the server stopped or ` +
      'restarted, or what listens there is not PostgreSQL'
    )
  }
  const code = (error as { code?: unknown }).code
  return `PostgreSQL: ${typeof code === 'string' ? `${code}: ` : ''}${error.message}`
}
