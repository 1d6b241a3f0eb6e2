import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { SqliteStore } from '../../src/sqlite.js'
import type { Store } from '../../src/store/store.js'
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
