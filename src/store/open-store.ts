import { ValidationError } from '../core/errors.js'
import { assertKnownKeys, optionKeys } from '../core/option-keys.js'
import type { MigrateResult, Store } from './store.js'
import { publishJobEvents } from './events/publish-events.js'

export const DEFAULT_STORE_URL = 'sqlite:./ferry.db'

export interface OpenStoreOptions {
  /**
   * Apply pending schema migrations on open (default true). With false, a store whose schema is
   * older than this Ferry's throws MigrationRequiredError: migrate it with migrateStore (or
   * `ferry migrate`) first.
   */
  migrate?: boolean
  /**
   * SQLite: create the database file when it does not exist (default true). With false, a missing
   * file is a StoreUnavailableError, so a mistyped path is reported instead of starting an empty
   * database. PostgreSQL schemas and Redis namespaces are created by migrating whatever this says.
   */
  create?: boolean
  /**
   * Redis: called at open with each warning about the server's settings (persistence that can
   * lose acknowledged jobs). Default: process.emitWarning, once per process for each warning.
   */
  onWarning?: (message: string) => void
}

/**
 * Opens a store from a URL, loading only that backend's driver:
 * - `sqlite:./path/to.db` or `sqlite:///absolute/path.db`; `?durability=normal` relaxes fsync,
 *   `?fileMode=0640` sets the permissions of a file it creates (default 0600)
 * - `postgres://user:password@host:5432/database` (or `postgresql://`); `?schema=ferry` names the
 *   schema, `?poolSize=10` the connections; pg's own (`sslmode`, `application_name`, …) go to the
 *   driver, and an unknown parameter, of any store URL, is a ValidationError
 * - `redis://host:6379/0` or `rediss://…` (TLS); `?namespace=name` keeps several Ferrys apart;
 *   `?cluster=true` when host is a node of a Redis Cluster; `?allowEviction=true` accepts a server
 *   whose maxmemory-policy may evict keys (and so jobs)
 */
const OPEN_STORE_OPTION_KEYS = optionKeys<OpenStoreOptions>({ migrate: true, create: true, onWarning: true })

export async function openStore(
  url: string = DEFAULT_STORE_URL,
  options: OpenStoreOptions = {},
): Promise<Store> {
  assertKnownKeys(options, OPEN_STORE_OPTION_KEYS, '')
  // Every Ferry process that opens a store by URL tells event subscribers what it moves.
  return publishJobEvents(await openBackend(url, options))
}

async function openBackend(url: string, options: OpenStoreOptions): Promise<Store> {
  const { migrate, create, onWarning } = options
  switch (schemeOf(url)) {
    case 'sqlite': {
      const { SqliteStore, parseSqliteUrl } = await import('./sqlite/sqlite-store.js')
      return SqliteStore.open({ ...parseSqliteUrl(url), migrate, create })
    }
    case 'postgres': {
      const { PostgresStore, parsePostgresUrl } = await import('./postgres/postgres-store.js')
      return PostgresStore.open({ ...parsePostgresUrl(url), migrate })
    }
    case 'redis': {
      const { RedisStore, parseRedisUrl } = await import('./redis/redis-store.js')
      return RedisStore.open({ ...parseRedisUrl(url), migrate, onWarning })
    }
  }
}

/**
 * Applies the pending schema migrations of the store a URL names and says what it applied: the
 * store is opened without migrating or checking its schema (openStore would already have applied
 * them), migrated, and closed. What `ferry migrate` runs.
 */
export async function migrateStore(url: string = DEFAULT_STORE_URL): Promise<MigrateResult> {
  switch (schemeOf(url)) {
    case 'sqlite': {
      const { SqliteStore, parseSqliteUrl } = await import('./sqlite/sqlite-store.js')
      return SqliteStore.applyMigrations(parseSqliteUrl(url))
    }
    case 'postgres': {
      const { PostgresStore, parsePostgresUrl } = await import('./postgres/postgres-store.js')
      return PostgresStore.applyMigrations(parsePostgresUrl(url))
    }
    case 'redis': {
      const { RedisStore, parseRedisUrl } = await import('./redis/redis-store.js')
      return RedisStore.applyMigrations(parseRedisUrl(url))
    }
  }
}

function schemeOf(url: string): 'sqlite' | 'postgres' | 'redis' {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase()
  if (scheme === 'sqlite') return 'sqlite'
  if (scheme === 'postgres' || scheme === 'postgresql') return 'postgres'
  if (scheme === 'redis' || scheme === 'rediss') return 'redis'
  throw new ValidationError(
    'invalid_option',
    'store',
    `"${url}" is not a store URL Ferry knows (use sqlite:./ferry.db, postgres://host/database or redis://host:6379)`,
  )
}
