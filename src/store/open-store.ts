import { ValidationError } from '../core/errors.js'
import type { Store } from './store.js'

export const DEFAULT_STORE_URL = 'sqlite:./ferry.db'

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
export async function openStore(url: string = DEFAULT_STORE_URL): Promise<Store> {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase()
  switch (scheme) {
    case 'sqlite': {
      const { SqliteStore, parseSqliteUrl } = await import('./sqlite/sqlite-store.js')
      return SqliteStore.open(parseSqliteUrl(url))
    }
    case 'postgres':
    case 'postgresql': {
      const { PostgresStore, parsePostgresUrl } = await import('./postgres/postgres-store.js')
      return PostgresStore.open(parsePostgresUrl(url))
    }
    case 'redis':
    case 'rediss': {
      const { RedisStore, parseRedisUrl } = await import('./redis/redis-store.js')
      return RedisStore.open(parseRedisUrl(url))
    }
    default:
      throw new ValidationError(
        'invalid_option',
        'store',
        `"${url}" is not a store URL Ferry knows (use sqlite:./ferry.db, postgres://host/database or redis://host:6379)`,
      )
  }
}
