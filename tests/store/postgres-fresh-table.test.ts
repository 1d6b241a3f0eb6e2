/**
 * A fresh jobs table, as every new deployment starts with, under a steady load: claims must cost
 * the same at the end as at the start, while the table grows from nothing to tens of thousands of
 * jobs and twice as many dead row versions. A third party's harness saw the opposite before
 * migrations/0007_plans_for_a_growing_table.sql: plans made while the table held a few rows read
 * it whole (`Seq Scan on jobs`) until autoanalyze came, and claims took seconds.
 *
 * The load: 600 no-op jobs/s for 90 s, one enqueue each (group-committed), worked by two Worker
 * instances of concurrency 16 on stores of their own, while a probe on another store times one
 * claim every 50 ms (bench/lib/steady-load.ts, which the postgres-churn benchmark runs too).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { percentile } from '../../bench/lib/stats.js'
import { runSteadyLoad, type LoadWindow } from '../../bench/lib/steady-load.js'
import pg from 'pg'

import { createClient } from '../../src/index.js'
import { PostgresStore } from '../../src/postgres.js'
import { privatePostgres, privatePostgresUnavailable } from '../support/private-postgres.js'
import { whenAvailable } from '../support/services.js'
import { waitFor } from '../support/async.js'
import { defer } from '../support/cleanup.js'
import { startWorker } from '../support/workers.js'

const RATE_PER_S = 600
const LOAD_MS = 90_000
const WINDOW_MS = 10_000
/** The jobs of a fresh deployment's first moments, before the load. */
const TRICKLE_JOBS = 40
const WORKERS = 2
const CONCURRENCY = 16
/**
 * Flat, on a machine shared with other work (CI runs two test files at once): a window's claim p50
 * may be P50_FACTOR times the first window's, or up to P50_FLOOR_MS, whichever is more, and its
 * p99 likewise; one window of the nine may pass either limit (a stall of the machine). Measured
 * here in 4 runs at load average 0.8-4.3, other engineers' tests running: p50 0.8-1.8 ms and p99
 * 2.4-35 ms in every window. With the plans of before 0007 (every function's enable_seqscan
 * reset), in 2 runs: p50 2.9-3.4 ms in the first window, then growing with the table to 70-84 ms,
 * over the limit in 7 windows of 8; p99 12-13 ms, then 95-148 ms.
 */
const P50_FACTOR = 5
const P50_FLOOR_MS = 15
const P99_FACTOR = 10
const P99_FLOOR_MS = 500
const WINDOWS_ALLOWED_OVER = 1
/** After the load, the workers finish what is left within this (they keep up with 600/s). */
const DRAIN_TIMEOUT_MS = 60_000

await whenAvailable(Promise.resolve(privatePostgresUnavailable()), () => {
  test(
    'claims cost as much after 90 s of steady load on a fresh table as in its first seconds',
    { timeout: LOAD_MS + 180_000 },
    async (t) => {
      // A server of the test's own: on the shared one, another test's open transaction holds back
      // the vacuum horizon of the whole database, and claims then slow down for that reason alone
      // (they walk past index entries nobody may remove yet: docs/backends.md, "Churn").
      const server = await privatePostgres(t, { settings: { max_connections: '100' } })
      const schema = 'ferry'
      const open = async (): Promise<PostgresStore> => {
        const store = await PostgresStore.open({ connectionString: server.url, schema })
        defer(t, () => store.close())
        return store
      }
      const adminQuery = async <R extends pg.QueryResultRow>(text: string): Promise<R[]> => {
        const admin = new pg.Client({ connectionString: server.url })
        await admin.connect()
        try {
          return (await admin.query<R>(text)).rows
        } finally {
          await admin.end()
        }
      }
      const probeStore = await open()
      // No autovacuum on this table for the run: the first autoanalyze replaces every cached plan,
      // and with autovacuum on it comes at a moment of its own within a minute. Without it the
      // whole run stays in the window where a fresh deployment's plans did the damage.
      await adminQuery(`ALTER TABLE "${schema}".jobs SET (autovacuum_enabled = false)`)
      const client = createClient({ store: await open() })
      defer(t, () => client.close())
      const workers = []
      for (let i = 0; i < WORKERS; i++) {
        workers.push(
          await startWorker(t, {
            store: await open(),
            handlers: { 'bench.noop': async () => {} },
            concurrency: CONCURRENCY,
          }),
        )
      }

      // A fresh deployment's first moments: a trickle of jobs while the table holds a few dozen rows,
      // which its first autoanalyze then describes (it comes once 50 rows changed). Plans made
      // now are kept until the next ANALYZE: the probe makes its claim's plans here, on its one
      // connection, so its claims under the load below run them (a generic plan after five calls).
      const completedCount = async (): Promise<number> => {
        const [row] = await adminQuery<{ count: string }>(
          `SELECT count(*) AS count FROM "${schema}".jobs WHERE state = 'completed'`,
        )
        return Number(row!.count)
      }
      for (let i = 0; i < TRICKLE_JOBS; i++) await client.enqueue('bench.noop', { trickle: i })
      await waitFor(
        async () => (await completedCount()) === TRICKLE_JOBS,
        30_000,
        'the trickle completed',
        100,
      )
      await adminQuery(`ANALYZE "${schema}".jobs`)
      for (let i = 0; i < 10; i++)
        await probeStore.claim({ queues: ['default'], limit: 1, leaseMs: 60_000, workerId: 'warm-up' })

      const { windows, enqueued } = await runSteadyLoad({
        client,
        probeStore,
        ratePerSecond: RATE_PER_S,
        durationMs: LOAD_MS,
        windowMs: WINDOW_MS,
        payloadBytes: 200,
      })

      const report = windows.map(describe).join('\n')
      t.diagnostic(`claim p50/p99 per ${WINDOW_MS / 1000} s window:\n${report}`)
      const [first, ...later] = windows
      for (const [p, factor, floorMs] of [
        [50, P50_FACTOR, P50_FLOOR_MS],
        [99, P99_FACTOR, P99_FLOOR_MS],
      ] as const) {
        const limitMs = Math.max(floorMs, factor * claimPercentile(first!, p))
        const over = later.filter((window) => claimPercentile(window, p) > limitMs)
        assert.ok(
          over.length <= WINDOWS_ALLOWED_OVER,
          `claim p${p} passed ${limitMs.toFixed(1)} ms in ${over.length} windows:\n${report}`,
        )
      }

      // The table really grew, and the workers kept up with it: everything offered gets done.
      await waitFor(
        async () => (await completedCount()) === TRICKLE_JOBS + enqueued,
        DRAIN_TIMEOUT_MS,
        `${enqueued} jobs completed`,
        500,
      )
      assert.ok(enqueued >= 0.9 * RATE_PER_S * (LOAD_MS / 1000), `${enqueued} jobs enqueued`)
      // Not asserted here: what the workers reported (their own tests cover it), said for the record.
      const errors = workers.flatMap((worker) => worker.errors)
      if (errors.length > 0)
        t.diagnostic(`${errors.length} worker error(s), the first: ${(errors[0] as Error).message}`)
    },
  )
})

/** A window without a claim is one whose claims all took longer than the window. */
function claimPercentile(window: LoadWindow, p: number): number {
  return window.claimMs.length === 0 ? Infinity : percentile(window.claimMs, p)
}

function describe(window: LoadWindow): string {
  const from = (window.index * WINDOW_MS) / 1000
  return (
    `  ${String(from).padStart(3)}-${from + WINDOW_MS / 1000} s: ${window.claimMs.length} claims, ` +
    `p50 ${claimPercentile(window, 50).toFixed(1)} ms, p99 ${claimPercentile(window, 99).toFixed(1)} ms; ` +
    `${window.enqueued} enqueued`
  )
}
