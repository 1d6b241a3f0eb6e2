/**
 * What only the SQLite store promises, beyond the shared conformance suite: how it sets SQLite up.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import type Database from 'better-sqlite3'

import { SqliteStore, type SqliteDurability } from '../../src/sqlite.js'
import { newJob } from '../helpers/store-harness.js'

async function withStore(
  durability: SqliteDurability,
  body: (store: SqliteStore) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-sqlite-'))
  const store = await SqliteStore.open({ path: join(dir, 'ferry.db'), durability })
  try {
    await body(store)
  } finally {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The store's own connection: PRAGMA synchronous is a setting of one connection. */
function pragma(store: SqliteStore, name: string): unknown {
  return (store as unknown as { db: Database.Database }).db.pragma(name, { simple: true })
}

const SYNCHRONOUS = { full: 2, normal: 1 } as const

for (const durability of ['full', 'normal'] as const) {
  test(`a '${durability}' store keeps synchronous=${durability.toUpperCase()} through claims and settlements`, async () => {
    await withStore(durability, async (store) => {
      assert.equal(pragma(store, 'journal_mode'), 'wal')
      assert.equal(pragma(store, 'synchronous'), SYNCHRONOUS[durability])
      await store.enqueue({ jobs: [newJob(), newJob()] })
      const [job] = await store.claim({ queues: ['default'], limit: 1, leaseMs: 30_000, workerId: 'w' })
      assert.equal(pragma(store, 'synchronous'), SYNCHRONOUS[durability])
      await store.settleAndClaim({
        settlements: [{ kind: 'completed', id: job!.id, leaseToken: job!.leaseToken }],
        claim: { queues: ['default'], limit: 1, leaseMs: 30_000, workerId: 'w' },
      })
      assert.equal(pragma(store, 'synchronous'), SYNCHRONOUS[durability])
    })
  })
}

test('a new database gets 8 KiB pages', async () => {
  await withStore('full', async (store) => {
    assert.equal(pragma(store, 'page_size'), 8192)
  })
})
