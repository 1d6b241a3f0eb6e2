/**
 * What only the SQLite store promises, beyond the shared conformance suite: how it sets SQLite up,
 * the permissions of the files it creates, and what it does when its file is deleted or replaced.
 */
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import Database from 'better-sqlite3'

import { createClient } from '../../src/index.js'
import { SqliteStore, type SqliteDurability } from '../../src/sqlite.js'
import { migrations as sqliteMigrations } from '../../src/store/sqlite/generated/assets.js'
import { tempDatabase } from '../support/sqlite-harness.js'
import { newJob } from '../support/store-harness.js'
import { waitFor } from '../support/async.js'
import { spawnFerry, WORKER_STARTED } from '../support/processes.js'
import { fixtureHandlers } from '../support/workers.js'
import { getJob } from '../support/store-calls.js'

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
      await store.settle({
        settlements: [{ kind: 'completed', id: job!.id, leaseToken: job!.leaseToken }],
        claim: { queues: ['default'], limit: 1, leaseMs: 30_000, workerId: 'w' },
      })
      assert.equal(pragma(store, 'synchronous'), SYNCHRONOUS[durability])
    })
  })
}

test(
  'a commit that makes work rings a doorbell in /dev/shm named by the database file, not the file itself; it wakes another store waiting on the file, and the last close removes it',
  { skip: process.platform === 'linux' ? false : 'the doorbell lives in /dev/shm, on Linux' },
  async (t) => {
    const db = tempDatabase(t)
    const producer = await db.open()
    const waiter = await db.open() // as another process would
    const { dev, ino, mode, mtimeMs } = statSync(db.path)
    const bell = `/dev/shm/ferry-${dev}-${ino}.bell`

    const waiting = waiter.waitForWork({ queues: ['default'], timeoutMs: 10_000 })
    await producer.enqueue({ jobs: [newJob()] })
    assert.equal((await waiting).reason, 'notified')
    assert.ok(existsSync(bell), 'the bell exists')
    assert.equal(statSync(bell).mode & 0o777, mode & 0o777, "with the database's permission bits")
    // A metadata change on the database's disk would be committed with the next fsync's journal.
    assert.equal(statSync(db.path).mtimeMs, mtimeMs, "the database file's times are untouched")

    await waiter.close()
    assert.ok(existsSync(bell), 'kept while a store has the database open')
    await producer.close()
    assert.ok(!existsSync(bell), 'removed by the last close')
  },
)

test('a file of schema version 4 migrates with every job kept as it was, ids given above those purged, and keys held', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-sqlite-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'ferry.db')
  // A file as a Ferry of schema version 4 left it: jobs in every state, the newest ones purged.
  const old = new Database(path)
  old.exec(
    'CREATE TABLE ferry_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT',
  )
  for (const migration of sqliteMigrations.filter((m) => m.version <= 4)) {
    old.exec(migration.sql)
    old.prepare('INSERT INTO ferry_migrations VALUES (?, ?, ?)').run(migration.version, migration.name, 1)
  }
  const insert = old.prepare(
    `INSERT INTO ferry_jobs (queue, name, payload, state, priority, run_at, attempts, max_attempts, timeout_ms,
       unique_key, lease_token, lease_expires_at, worker_id, last_error, result, created_at, updated_at, finished_at)
     VALUES (:queue, :name, :payload, :state, :priority, :run_at, :attempts, :max_attempts, :timeout_ms,
       :unique_key, :lease_token, :lease_expires_at, :worker_id, :last_error, :result, 1, :updated_at, :finished_at)`,
  )
  const plain = {
    queue: 'q',
    name: 'a',
    payload: '{}',
    priority: 0,
    run_at: 10,
    attempts: 1,
    max_attempts: 25,
  }
  const unset = {
    timeout_ms: null,
    unique_key: null,
    lease_token: null,
    lease_expires_at: null,
    worker_id: null,
  }
  const rows = [
    { state: 'ready', payload: '{"n":1}', priority: 5, attempts: 0, unique_key: 'held', updated_at: 2 },
    {
      state: 'scheduled',
      name: 'b',
      run_at: 9e12,
      max_attempts: 3,
      timeout_ms: 500,
      last_error: '{"m":"x"}',
    },
    { state: 'active', lease_token: 'tok', lease_expires_at: 99, worker_id: 'w1', updated_at: 4 },
    { state: 'completed', queue: 'r', result: '{"ok":1}', finished_at: 5 },
    { state: 'dead', queue: 'r', attempts: 3, max_attempts: 3, last_error: '{"m":"y"}', finished_at: 6 },
    ...Array.from({ length: 3 }, () => ({ state: 'completed', finished_at: 7 })),
  ]
  for (const row of rows) {
    insert.run({
      ...plain,
      ...unset,
      last_error: null,
      result: null,
      updated_at: 3,
      finished_at: null,
      ...row,
    })
  }
  old.exec('DELETE FROM ferry_jobs WHERE id > 5') // purged: ids 6 to 8 were given once
  const before = old.prepare('SELECT * FROM ferry_jobs ORDER BY id').all()
  old.close()

  const store = await SqliteStore.open({ path })
  t.after(() => store.close())
  const db = (store as unknown as { db: Database.Database }).db
  // Later migrations add columns, empty for the jobs of before but the held key (migration 0010).
  assert.deepEqual(
    db.prepare('SELECT * FROM ferry_jobs ORDER BY id').all(),
    before.map((row) => ({
      ...(row as object),
      group_key: null,
      expires_at: null,
      meta: null,
      held_unique_key: (row as { unique_key: string | null }).unique_key,
      unique_until: null,
      unique_expires_at: null,
      keep_for_ms: null,
      progress: null,
      logs: null,
    })),
  )
  assert.equal(db.pragma('integrity_check', { simple: true }), 'ok')
  assert.doesNotMatch(
    db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'ferry_jobs'").pluck().get() as string,
    /CHECK|AUTOINCREMENT/,
  )
  assert.deepEqual(
    db
      .prepare(
        "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'ferry_jobs' ORDER BY name",
      )
      .pluck()
      .all(),
    [
      'ferry_jobs_active',
      'ferry_jobs_active_grouped',
      'ferry_jobs_deadline',
      'ferry_jobs_finished',
      'ferry_jobs_held_unique_key',
      'ferry_jobs_kept',
      'ferry_jobs_listed_by_queue',
      'ferry_jobs_listed_by_queue_state',
      'ferry_jobs_listed_by_state',
      'ferry_jobs_ready_by_name',
      'ferry_jobs_ready_grouped',
      'ferry_jobs_retention',
      'ferry_jobs_scheduled',
    ],
  )
  const results = await store.enqueue({ jobs: [newJob(), newJob({ uniqueKey: 'held' })] })
  assert.deepEqual(results, [
    { id: '9', created: true },
    { id: '1', created: false },
  ])
})

test('a new database gets 4 KiB pages', async () => {
  await withStore('full', async (store) => {
    assert.equal(pragma(store, 'page_size'), 4096)
  })
})

test('creates its database, -wal and -shm files readable by their owner only, or with the fileMode given', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-sqlite-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  for (const [name, fileMode, expected] of [
    ['private.db', undefined, 0o600],
    ['shared.db', 0o640, 0o640],
  ] as const) {
    const path = join(dir, name)
    const store = await SqliteStore.open({ path, ...(fileMode === undefined ? {} : { fileMode }) })
    try {
      await store.enqueue({ jobs: [newJob()] })
      for (const file of [path, `${path}-wal`, `${path}-shm`]) {
        assert.equal((statSync(file).mode & 0o777).toString(8), expected.toString(8), file)
      }
    } finally {
      await store.close()
    }
  }
  await assert.rejects(SqliteStore.open({ path: join(dir, 'x.db'), fileMode: 0o1777 }), {
    code: 'invalid_option',
    field: 'fileMode',
  })
})

for (const how of ['deleted', 'replaced'] as const) {
  test(`a store whose database file is ${how} under it rejects enqueues for good, and a waiting worker stops`, async (t) => {
    const database = tempDatabase(t)
    const worker = spawnFerry(t, [
      '--store',
      database.url,
      'work',
      '--handlers',
      fixtureHandlers('plain.mjs'),
    ])
    await worker.waitForOutput(WORKER_STARTED)
    const store = await database.open()
    const client = createClient({ store })
    const { id } = await client.enqueue('plain-mjs', { n: 1 })
    await waitFor(async () => (await getJob(store, id))?.state === 'completed', 10_000, 'the first job')

    if (how === 'deleted') {
      rmSync(database.path)
    } else {
      const other = join(dirname(database.path), 'restored.db')
      const restored = await SqliteStore.open({ path: other })
      await restored.close()
      renameSync(other, database.path)
    }
    const rejected = {
      code: 'store_unavailable',
      retryable: false,
      message: new RegExp(`was ${how === 'deleted' ? 'deleted' : 'replaced'}`),
    }
    await assert.rejects(client.enqueue('plain-mjs', { n: 2 }), rejected)
    await assert.rejects(store.stats(), rejected, 'every later call says so too')
    const exit = await worker.waitForExit(20_000)
    assert.equal(exit.code, 1, exit.stderr)
    assert.match(exit.stderr, new RegExp(`the store is gone, stopping: .*was ${how}`))
    assert.match(exit.stderr, /stopped \(store-lost\)/)
  })
}
