import Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import type { TestContext } from 'node:test'

import { SqliteStore, type SqliteStoreOptions } from '../../src/sqlite.js'
import type { Store } from '../../src/store/store.js'
import { defer } from './cleanup.js'
import type { CreateHarness, StoreHarness } from './store-harness.js'

/** A fresh database file in its own temp directory; peers open the same file as another process would. */
export const createSqliteHarness: CreateHarness = async (): Promise<StoreHarness> => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-conformance-'))
  const path = join(dir, 'ferry.db')
  const opened: Store[] = []
  try {
    const store = await SqliteStore.open({ path })
    opened.push(store)
    return {
      store,
      url: `sqlite://${path}`,
      async openPeer() {
        const peer = await SqliteStore.open({ path })
        opened.push(peer)
        return peer
      },
      async close() {
        // Close every instance, even when one fails; closing one the test already closed is harmless.
        const closing = await Promise.allSettled(opened.map((s) => s.close()))
        rmSync(dir, { recursive: true, force: true })
        const failed = closing.find((r) => r.status === 'rejected')
        if (failed) throw failed.reason
      },
    }
  } catch (err) {
    await Promise.allSettled(opened.map((s) => s.close()))
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
}

export interface TempDatabase {
  dir: string
  path: string
  /** The --store URL of the file. */
  url: string
  /** Opens the file, as another process would; every store opened here is closed after the test. */
  open(options?: Partial<SqliteStoreOptions>): Promise<SqliteStore>
}

/** A database file in its own temp directory, removed (after its stores are closed) when the test ends. */
export function tempDatabase(t: TestContext): TempDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-test-'))
  // Deferred first, so it runs last: after the stores, workers and processes the test started.
  defer(t, () => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'ferry.db')
  return {
    dir,
    path,
    url: `sqlite://${path}`,
    async open(options = {}) {
      const store = await SqliteStore.open({ ...options, path })
      defer(t, () => store.close())
      return store
    },
  }
}

export interface TempStore extends TempDatabase {
  /** A store opened on the file. */
  store: SqliteStore
  /** Another connection to the same file, as another process would have (`open`). */
  openPeer: TempDatabase['open']
}

/** tempDatabase with a store already open on it. */
export async function tempStore(t: TestContext): Promise<TempStore> {
  const db = tempDatabase(t)
  return { ...db, store: await db.open(), openPeer: db.open }
}

/**
 * A connection holding the database's write lock until `release()` (or the end of the test), as a
 * long transaction of another process would: a store waiting less than that for it gets SQLITE_BUSY.
 */
export function holdWriteLock(t: TestContext, path: string): { release: () => void } {
  const db = new Database(path)
  db.exec('BEGIN IMMEDIATE')
  const release = (): void => {
    if (db.open && db.inTransaction) db.exec('COMMIT')
  }
  defer(t, () => db.close())
  defer(t, release)
  return { release }
}
