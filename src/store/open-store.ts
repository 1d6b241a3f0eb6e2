import { ValidationError } from '../core/errors.js'
import type { Store } from './store.js'

export const DEFAULT_STORE_URL = 'sqlite:./ferry.db'

/**
 * Opens a store from a URL, loading only that backend's driver:
 * - `sqlite:./path/to.db` or `sqlite:///absolute/path.db`; `?durability=normal` relaxes fsync
 */
export async function openStore(url: string = DEFAULT_STORE_URL): Promise<Store> {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase()
  switch (scheme) {
    case 'sqlite': {
      const { SqliteStore, parseSqliteUrl } = await import('./sqlite/sqlite-store.js')
      return SqliteStore.open(parseSqliteUrl(url))
    }
    default:
      throw new ValidationError(
        'invalid_option',
        'store',
        `"${url}" is not a store URL Ferry knows (use sqlite:./ferry.db)`,
      )
  }
}
