import { join } from 'node:path'
import Database from 'better-sqlite3'
import { createClient, type Client } from '../../src/client/client.js'
import { SqliteStore, type SqliteDurability } from '../../src/sqlite.js'
import { fileSize } from './temp.js'

export interface BenchStore {
  store: SqliteStore
  client: Client
  path: string
  /** Waits for enqueues in flight, then closes the store. */
  close(): Promise<void>
}

/** Opens (creating if needed) the SQLite store at `dir/file` with a producer client on it. */
export async function openBenchStore(
  dir: string,
  durability: SqliteDurability,
  file = 'bench.db',
): Promise<BenchStore> {
  const path = join(dir, file)
  const store = await SqliteStore.open({ path, durability })
  const client = createClient({ store })
  return {
    store,
    client,
    path,
    async close() {
      try {
        await client.close()
      } finally {
        await store.close()
      }
    },
  }
}

/**
 * Bytes the database takes on disk: checkpoints the WAL into the main file and truncates it, then
 * adds the sizes of the main file and the WAL. The store must be closed.
 */
export function databaseBytes(path: string): number {
  const db = new Database(path)
  try {
    db.pragma('wal_checkpoint(TRUNCATE)')
  } finally {
    db.close()
  }
  return fileSize(path) + fileSize(`${path}-wal`)
}
