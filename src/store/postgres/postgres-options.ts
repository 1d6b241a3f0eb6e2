/**
 * What a PostgreSQL store is opened with: its options, checked before anything connects, the
 * store URL that sets them (`postgres://…?schema=…&poolSize=…`), and what the driver makes of the
 * connection string. A connection string's parameter that pg would drop in silence is refused.
 */
import { ValidationError } from '../../core/errors.js'
import { assertInteger } from '../../core/validate.js'
import { assertKnownKeys, optionKeys } from '../../core/option-keys.js'
import { serverAddress } from '../connection-error.js'

export interface PostgresStoreOptions {
  /** A libpq-style URL, e.g. postgres://user:password@host:5432/database (no Ferry parameters). */
  connectionString: string
  /** The PostgreSQL schema holding Ferry's tables and functions. Default 'ferry'. */
  schema?: string
  /** Apply pending migrations on open (default). When false, an outdated schema is an error. */
  migrate?: boolean
  /** Connections in the pool, besides the one that listens for notifications. Default 10. */
  poolSize?: number
}

const DEFAULT_SCHEMA = 'ferry'
const DEFAULT_POOL_SIZE = 10
const DEFAULT_PORT = 5432
/** Lower case only, so the name never needs case-sensitive quoting; short enough that the
 * notification channel `ferry:<schema>` stays within PostgreSQL's 63-byte identifiers. */
const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,47}$/

const POSTGRES_OPTION_KEYS = optionKeys<PostgresStoreOptions>({
  connectionString: true,
  schema: true,
  migrate: true,
  poolSize: true,
})

/** The options a postgres:// URL may set for Ferry, by their names in PostgresStoreOptions. */
const POSTGRES_URL_PARAMS = ['schema', 'poolSize'] as const satisfies readonly (keyof PostgresStoreOptions)[]

/**
 * The query parameters of a connection string that pg 8.23 acts on (pg-connection-string's parse
 * and pg's ConnectionParameters read them). Any other is dropped by the driver without a word, so
 * it is refused: a typo of `sslmode` would connect without TLS. `connect_timeout` and `binary` are
 * not here because pg reads them from its options object only, never from the URL.
 */
const DRIVER_URL_PARAMS = [
  'host',
  'port',
  'user',
  'password',
  'ssl',
  'sslmode',
  'sslcert',
  'sslkey',
  'sslrootcert',
  'sslnegotiation',
  'uselibpqcompat',
  'application_name',
  'fallback_application_name',
  'client_encoding',
  'options',
  'statement_timeout',
  'lock_timeout',
  'idle_in_transaction_session_timeout',
  'query_timeout',
] as const

/** Options as the store uses them: checked, with their defaults. */
export interface CheckedPostgresOptions {
  connectionString: string
  schema: string
  poolSize: number
  /** host:port, for the messages of connection errors. */
  server: string
}

/** Refuses unknown keys alone: what open() checks before a misspelt option migrates anything. */
export function assertPostgresOptionKeys(options: PostgresStoreOptions): void {
  assertKnownKeys(options, POSTGRES_OPTION_KEYS, '')
}

export function checkPostgresOptions({
  connectionString,
  schema = DEFAULT_SCHEMA,
  poolSize = DEFAULT_POOL_SIZE,
}: PostgresStoreOptions): CheckedPostgresOptions {
  if (typeof connectionString !== 'string' || connectionString === '') {
    throw new ValidationError('invalid_option', 'connectionString', 'must be a postgres:// URL')
  }
  assertDriverParams(connectionString)
  if (typeof schema !== 'string' || !SCHEMA_PATTERN.test(schema) || schema.startsWith('pg_')) {
    throw new ValidationError(
      'invalid_option',
      'schema',
      `must be 1 to 48 of a-z, 0-9 and _, not starting with a digit or pg_ (got ${JSON.stringify(schema)})`,
    )
  }
  assertInteger(poolSize, 'poolSize', { min: 1, max: 1000 })
  return { connectionString, schema, poolSize, server: serverOf(connectionString) }
}

/**
 * Parses `postgres://…` or `postgresql://…`. Ferry's own parameters are taken out of the query
 * string (`schema`, `poolSize`); every other part goes to the driver as it is.
 */
export function parsePostgresUrl(url: string): PostgresStoreOptions {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new ValidationError('invalid_option', 'store', `"${redact(url)}" is not a valid postgres:// URL`)
  }
  assertKnownKeys(
    Object.fromEntries(parsed.searchParams),
    [...POSTGRES_URL_PARAMS, ...DRIVER_URL_PARAMS],
    'store',
  )
  const options: PostgresStoreOptions = { connectionString: '' }
  const schema = parsed.searchParams.get('schema')
  if (schema !== null) options.schema = schema
  const poolSize = parsed.searchParams.get('poolSize')
  if (poolSize !== null) {
    options.poolSize = /^\d+$/.test(poolSize) ? Number(poolSize) : NaN
  }
  for (const name of POSTGRES_URL_PARAMS) parsed.searchParams.delete(name)
  options.connectionString = parsed.toString()
  return options
}

/**
 * Refuses a connection string's query parameter that the driver would drop, Ferry's own included
 * (`schema` is an option beside connectionString, not in it). A string that is no postgres:// URL
 * (a socket path) is left to the driver.
 */
function assertDriverParams(connectionString: string): void {
  let parsed: URL
  try {
    parsed = new URL(connectionString)
  } catch {
    return
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') return
  assertKnownKeys(Object.fromEntries(parsed.searchParams), DRIVER_URL_PARAMS, 'connectionString')
}

/** A URL with its password hidden, for messages. */
function redact(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@')
}

/** host:port of a connection string, for messages: a `?host=` (a socket directory) wins, as in pg. */
function serverOf(connectionString: string): string {
  const address = serverAddress(connectionString, DEFAULT_PORT)
  try {
    const host = new URL(connectionString).searchParams.get('host')
    return host === null ? address : `${host}:${address.slice(address.lastIndexOf(':') + 1)}`
  } catch {
    return address
  }
}
