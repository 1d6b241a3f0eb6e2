/**
 * SQLite's job counts (migrations/0014_job_counts.sql), which stats() reads instead of counting
 * the jobs: after every kind of change a job can go through, they equal a count of ferry_jobs, and
 * stats() equals what the count of the table that it replaced made of the same rows.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import Database from 'better-sqlite3'

import type { ClaimedJob, JobError, JobState } from '../../src/core/job.js'
import { firedJob } from '../../src/core/schedule.js'
import { SqliteStore } from '../../src/sqlite.js'
import { migrations as sqliteMigrations } from '../../src/store/sqlite/generated/assets.js'
import { foldStats, statsCountOf, type StatsCount } from '../../src/store/kernel/stats.js'
import type { QueueStats } from '../../src/store/store.js'
import { tempDatabase } from '../support/sqlite-harness.js'
import { newJob } from '../support/store-harness.js'

const SECOND = 1000
const DAY = 86_400_000
const EXPIRED: JobError = { kind: 'expired', message: 'its start deadline passed' }

function dbOf(store: SqliteStore): Database.Database {
  return (store as unknown as { db: Database.Database }).db
}

/** The counts kept, and the same counted from the jobs: rows of 0 left out of both. */
function countsOf(db: Database.Database): { kept: unknown[]; counted: unknown[] } {
  return {
    kept: db
      .prepare('SELECT queue, state, count FROM ferry_job_counts WHERE count <> 0 ORDER BY queue, state')
      .all(),
    counted: db
      .prepare(
        `SELECT queue, state, count(*) AS count FROM ferry_jobs GROUP BY queue, state
         UNION ALL
         SELECT queue, 'expired', count(*) FROM ferry_jobs
         WHERE state = 'dead' AND expires_at IS NOT NULL AND last_error ->> '$.kind' = 'expired'
         GROUP BY queue
         ORDER BY 1, 2`,
      )
      .all(),
  }
}

/** What stats() returned before the counts: the whole table counted (the SQL of sql/stats.sql and sql/stats-expired.sql before migration 0014). */
function scannedStats(db: Database.Database, now: number, recentWindowMs = 60_000): QueueStats[] {
  type Row = { queue: string; state: JobState; count: number; oldest?: number }
  const rows = db
    .prepare(
      `SELECT queue, CASE WHEN state = 'scheduled' AND run_at <= :now THEN 'ready' ELSE state END AS state,
              count(*) AS count, min(run_at) AS oldest
       FROM ferry_jobs GROUP BY 1, 2`,
    )
    .all({ now }) as Row[]
  const expired = db
    .prepare(
      `SELECT queue, count(*) AS count FROM ferry_jobs
       WHERE state = 'dead' AND expires_at IS NOT NULL AND last_error ->> '$.kind' = 'expired' GROUP BY 1`,
    )
    .all() as Row[]
  const recent = db
    .prepare(
      `SELECT queue, state, count(*) AS count FROM ferry_jobs
       WHERE state IN ('completed', 'dead') AND finished_at >= :since GROUP BY 1, 2`,
    )
    .all({ since: now - recentWindowMs }) as Row[]
  return foldStats(
    [
      ...rows.map(({ queue, state, count, oldest }): StatsCount => ({
        queue,
        of: statsCountOf('count', state),
        count,
        oldestAt: oldest ?? null,
      })),
      ...expired.map(({ queue, count }): StatsCount => ({ queue, of: 'expired', count })),
      ...recent.map(({ queue, state, count }): StatsCount => ({
        queue,
        of: statsCountOf('recent', state),
        count,
      })),
    ],
    recentWindowMs,
  )
}

/** After `step`: the counts are exact, and stats() is what the count of the table made of the jobs. */
async function check(store: SqliteStore, step: string, now: number): Promise<void> {
  const db = dbOf(store)
  const { kept, counted } = countsOf(db)
  assert.deepEqual(kept, counted, `counts after ${step}`)
  assert.equal(
    db.prepare('SELECT count(*) FROM ferry_job_counts WHERE count < 0').pluck().get(),
    0,
    `no count below 0 after ${step}`,
  )
  for (const at of [now, now + 2 * DAY]) {
    assert.deepEqual(
      await store.stats({ now: at }),
      scannedStats(db, at),
      `stats at +${at - now} ms after ${step}`,
    )
  }
}

async function open(t: TestContext): Promise<SqliteStore> {
  return tempDatabase(t).open()
}

function claimOf(store: SqliteStore, queue: string, limit: number, now: number, leaseMs = 30 * SECOND) {
  return store.claim({ queues: [queue], limit, leaseMs, workerId: 'w', now })
}

test('the job counts follow every change of a job, and stats() reads them as the count of the table did', async (t) => {
  const store = await open(t)
  const t0 = Date.now()
  await check(store, 'nothing', t0)

  // Enqueues: one job alone, runs of rows that share their columns and runs that do not, jobs
  // with keys (one held: not created), scheduled ones, groups, priorities, start deadlines.
  await store.enqueue({ jobs: [newJob({ queue: 'a' })], now: t0 })
  await check(store, 'a lone enqueue', t0)
  const many = [
    ...Array.from({ length: 200 }, () => newJob({ queue: 'a', name: 'bulk' })),
    ...Array.from({ length: 150 }, (_, i) =>
      newJob({
        queue: i % 2 === 0 ? 'b' : 'c',
        name: `n${i % 5}`,
        priority: i % 3,
        delayMs: i % 4 === 0 ? (1 + (i % 7)) * SECOND : 0,
        group: i % 6 === 0 ? `g${i % 4}` : null,
      }),
    ),
    newJob({ queue: 'a', uniqueKey: 'k1' }),
    newJob({ queue: 'a', uniqueKey: 'k1' }), // held by the one before: not created
    ...Array.from({ length: 64 }, () => newJob({ queue: 'd', delayMs: DAY })),
  ]
  const results = await store.enqueue({ jobs: many, now: t0 })
  assert.equal(results.filter((r) => !r.created).length, 1)
  await check(store, 'an enqueueMany', t0)
  await store.enqueue({ jobs: [newJob({ queue: 'a', uniqueKey: 'k1' })], now: t0 })
  await check(store, 'an enqueue whose key is held', t0)

  // A debounce moves its holder (scheduled -> ready); a throttle whose window ended frees its key.
  await store.enqueue({
    jobs: [newJob({ queue: 'e', uniqueKey: 'deb', debounceMs: 5 * SECOND, delayMs: 5 * SECOND })],
    now: t0,
  })
  await store.enqueue({
    jobs: [newJob({ queue: 'e', uniqueKey: 'deb', debounceMs: 0, delayMs: 0 })],
    now: t0,
  })
  await store.enqueue({ jobs: [newJob({ queue: 'e', uniqueKey: 'thr', uniqueForMs: 10 })], now: t0 })
  await store.enqueue({ jobs: [newJob({ queue: 'e', uniqueKey: 'thr', uniqueForMs: 10 })], now: t0 + 20 })
  await check(store, 'a debounce and a throttle', t0)

  // Claims, then each settlement.
  const claimed = await claimOf(store, 'a', 8, t0)
  await check(store, 'a claim', t0)
  const [done, again, dead, snoozed, ...rest] = claimed as [
    ClaimedJob,
    ClaimedJob,
    ClaimedJob,
    ClaimedJob,
    ...ClaimedJob[],
  ]
  const error: JobError = { kind: 'error', message: 'boom' }
  const settled = await store.settle({
    settlements: [
      { kind: 'completed', id: done.id, leaseToken: done.leaseToken },
      { kind: 'retry', id: again.id, leaseToken: again.leaseToken, runAt: t0 + 10 * SECOND, error },
      { kind: 'dead', id: dead.id, leaseToken: dead.leaseToken, error },
      { kind: 'snoozed', id: snoozed.id, leaseToken: snoozed.leaseToken, runAt: t0 },
    ],
    claim: { queues: ['b'], limit: 3, leaseMs: 30 * SECOND, workerId: 'w' },
    now: t0,
  })
  assert.equal(settled.claimed.length, 3)
  await check(store, 'settlements with a claim', t0)

  // Cancel: an active, a ready and a scheduled job.
  const [scheduledId] = (await store.enqueue({ jobs: [newJob({ queue: 'a', delayMs: DAY })], now: t0 })).map(
    (r) => r.id,
  )
  const [readyId] = (await store.enqueue({ jobs: [newJob({ queue: 'a' })], now: t0 })).map((r) => r.id)
  assert.equal(await store.cancel({ ids: [rest[0]!.id, readyId!, scheduledId!], now: t0 }), 3)
  await check(store, 'cancels', t0)

  // Retry of dead jobs: by id, then every one of a queue.
  assert.equal(await store.retry({ ids: [dead.id], now: t0 }), 1)
  await check(store, 'a retry by id', t0)
  assert.equal(await store.retry({ allDead: true, queue: 'a', now: t0 }), 3) // the three cancelled
  await check(store, 'a retry of every dead job of a queue', t0)

  // changeJobs: ready -> scheduled, scheduled -> ready, a priority only.
  const [toLater, toNow] = (
    await store.enqueue({ jobs: [newJob({ queue: 'f' }), newJob({ queue: 'f', delayMs: DAY })], now: t0 })
  ).map((r) => r.id)
  const { results: changed } = await store.changeJobs({
    changes: [
      { id: toLater!, runAt: t0 + DAY },
      { id: toNow!, runAt: t0 },
      { id: results[210]!.id, priority: 9 },
    ],
    now: t0,
  })
  assert.deepEqual(changed, ['ok', 'ok', 'ok'])
  await check(store, 'changeJobs', t0)

  // Due scheduled jobs: ready to stats() before a claim moves them, and after.
  const t1 = t0 + 10 * SECOND
  await check(store, 'time passing', t1)
  await claimOf(store, 'c', 2, t1)
  await check(store, 'a claim that makes due jobs ready', t1)

  // A lease that ran out: back to ready with attempts left, dead without.
  const [lastTry] = (
    await store.enqueue({ jobs: [newJob({ queue: 'g', maxAttempts: 1 }), newJob({ queue: 'g' })], now: t1 })
  ).map((r) => r.id)
  const leased = await claimOf(store, 'g', 2, t1, SECOND)
  assert.equal(leased.length, 2)
  const recovered = await store.recoverExpired({ now: t1 + 2 * SECOND })
  assert.deepEqual(recovered.dead, [lastTry])
  assert.equal(recovered.retried.length, 1)
  await check(store, 'a recovery of expired leases', t1 + 2 * SECOND)

  // Start deadlines: jobs not started by then end dead as expired (a claim's step 0 and the
  // recoverer's), and leave the expired count when retried; a settle with an error of kind
  // 'expired' on a job with a deadline counts as the count of the table did.
  const t2 = t1 + 5 * SECOND
  await store.enqueue({
    jobs: [
      ...Array.from({ length: 3 }, () => newJob({ queue: 'h', expiresAt: t2 + SECOND })),
      newJob({ queue: 'h', expiresAt: t2 + SECOND, delayMs: 2 * SECOND }),
      newJob({ queue: 'i', expiresAt: t2 + SECOND }),
      newJob({ queue: 'j', expiresInMs: DAY }),
    ],
    now: t2,
  })
  const [expiring] = await claimOf(store, 'j', 1, t2)
  await store.settle({
    settlements: [{ kind: 'dead', id: expiring!.id, leaseToken: expiring!.leaseToken, error: EXPIRED }],
    now: t2,
  })
  await check(store, 'jobs with deadlines', t2)
  const t3 = t2 + 2 * SECOND
  const expired = await store.recoverExpired({ now: t3, expireJobs: true, limit: 2 })
  assert.equal(expired.expired.length, 2)
  await check(store, 'start deadlines passed (the recoverer)', t3)
  await claimOf(store, 'b', 1, t3)
  await check(store, 'start deadlines passed (a claim)', t3)
  const deadOfH = (await store.listJobs({ state: 'dead', queue: 'h' })).jobs
  assert.equal(deadOfH.length, 4)
  assert.equal(await store.retry({ ids: [deadOfH[0]!.id], now: t3 }), 1)
  await check(store, 'a retry of an expired job', t3)

  // A schedule's fire enqueues through the same path.
  const def = {
    id: 'hourly',
    cron: '0 * * * *',
    timeZone: 'UTC',
    job: {
      name: 'report',
      queue: 'k',
      payload: '{}',
      priority: 0,
      maxAttempts: 3,
      timeoutMs: null,
      group: null,
      expiresInMs: null,
      backoff: null,
    },
    missed: 'skip' as const,
    overlap: 'allow' as const,
  }
  const [schedule] = (await store.schedules({ put: [def], now: t3 })).schedules
  const slots = [schedule!.lastSlot + 3_600_000, schedule!.lastSlot + 7_200_000]
  const fired = await store.fireSchedule({
    id: schedule!.id,
    version: schedule!.version,
    lastSlot: schedule!.lastSlot,
    toSlot: slots[1]!,
    jobs: slots.map((slot) => firedJob(schedule!.id, schedule!.job, slot, false)),
    now: t3,
  })
  assert.equal(fired.outcome, 'fired')
  await check(store, 'a schedule fired', t3)

  // Deletes: purge, then prune by retention.
  assert.ok((await store.purge({ state: 'dead', queue: 'h', now: t3 })) > 0)
  await check(store, 'a purge', t3)
  const finishing = await claimOf(store, 'b', 20, t3)
  await store.settle({
    settlements: finishing.map((job, i) =>
      i % 2 === 0
        ? { kind: 'completed' as const, id: job.id, leaseToken: job.leaseToken }
        : { kind: 'dead' as const, id: job.id, leaseToken: job.leaseToken, error },
    ),
    now: t3,
  })
  await check(store, 'more finished', t3)
  const pruned = await store.prune({ now: t3 + 15 * DAY, limit: 10_000 })
  assert.ok(pruned.deleted > 0)
  await check(store, 'a prune', t3 + 15 * DAY)

  // Everything gone: no queue left in stats, however many rows of 0 stay.
  for (const state of ['completed', 'dead'] as const) await store.purge({ state, now: t3 + 30 * DAY })
  const rest2 = await store.listJobs({ limit: 1000 })
  await store.cancel({ ids: rest2.jobs.map((job) => job.id), now: t3 + 30 * DAY })
  await store.purge({ state: 'dead', now: t3 + 31 * DAY })
  await check(store, 'everything purged', t3 + 31 * DAY)
  assert.deepEqual(await store.stats({ now: t3 + 31 * DAY }), [])
  assert.ok(
    (dbOf(store).prepare('SELECT count(*) FROM ferry_job_counts').pluck().get() as number) > 0,
    'rows of 0 stay',
  )
})

test('stats() reads no job table scan: its queries stay in the counts and the indexes', async (t) => {
  const store = await open(t)
  const db = dbOf(store)
  const { sql } = await import('../../src/store/sqlite/generated/assets.js')
  for (const name of ['stats-counts', 'stats-due', 'stats-oldest-ready', 'stats-recent'] as const) {
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql[name]}`).all({ now: 0, since: 0 }) as {
      detail: string
    }[]
    const scans = plan.map((row) => row.detail).filter((detail) => /^SCAN ferry_jobs\b/.test(detail))
    assert.deepEqual(scans, [], `${name} scans no table of jobs`)
  }
})

test('a file of schema version 13 migrates with its jobs counted', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-sqlite-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'ferry.db')
  // A file as a Ferry of schema version 13 left it: jobs of two queues in every state, a due
  // scheduled one, grouped and prioritised ready ones, and among the dead one that expired.
  const old = new Database(path)
  old.exec(
    'CREATE TABLE ferry_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT',
  )
  for (const migration of sqliteMigrations.filter((m) => m.version <= 13)) {
    old.exec(migration.sql)
    old.prepare('INSERT INTO ferry_migrations VALUES (?, ?, ?)').run(migration.version, migration.name, 1)
  }
  const t0 = Date.now()
  const insert = old.prepare(
    `INSERT INTO ferry_jobs (queue, name, payload, state, priority, run_at, max_attempts, group_key, expires_at,
       last_error, created_at, updated_at, finished_at)
     VALUES (:queue, 'n', '{}', :state, :priority, :run_at, 3, :group_key, :expires_at, :last_error, 1, 1, :finished_at)`,
  )
  const row = {
    queue: 'q',
    priority: 0,
    run_at: t0,
    group_key: null,
    expires_at: null,
    last_error: null,
    finished_at: null,
  }
  const rows = [
    ...Array.from({ length: 5 }, (_, i) => ({ state: 'ready', run_at: t0 - i })),
    { state: 'ready', queue: 'r', group_key: 'g', priority: 3, run_at: t0 - 50 },
    { state: 'scheduled', run_at: t0 + DAY },
    { state: 'scheduled', queue: 'r', run_at: t0 - 100 }, // due
    { state: 'active' },
    { state: 'completed', finished_at: t0 },
    { state: 'dead', finished_at: t0, last_error: '{"kind":"error","message":"x"}' },
    { state: 'dead', queue: 'r', finished_at: t0, expires_at: t0, last_error: JSON.stringify(EXPIRED) },
  ]
  for (const r of rows) insert.run({ ...row, ...r })
  old.close()

  const store = await SqliteStore.open({ path })
  t.after(() => store.close())
  const db = dbOf(store)
  const { kept, counted } = countsOf(db)
  assert.deepEqual(kept, counted)
  assert.deepEqual(
    kept.filter((r) => (r as { state: string }).state === 'expired'),
    [{ queue: 'r', state: 'expired', count: 1 }],
  )
  await check(store, 'the migration', t0)
  assert.deepEqual(
    (await store.stats({ now: t0 })).map(({ queue, ready, scheduled, oldestReadyAt, expired }) => ({
      queue,
      ready,
      scheduled,
      oldestReadyAt,
      expired,
    })),
    [
      { queue: 'q', ready: 5, scheduled: 1, oldestReadyAt: t0 - 4, expired: 0 },
      { queue: 'r', ready: 2, scheduled: 0, oldestReadyAt: t0 - 100, expired: 1 },
    ],
  )
  await store.enqueue({ jobs: [newJob({ queue: 'q' })], now: t0 })
  await check(store, 'an enqueue after the migration', t0)
})
