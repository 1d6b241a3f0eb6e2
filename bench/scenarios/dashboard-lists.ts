/**
 * The dashboard's job lists (issue 24) at `size` jobs on SQLite and PostgreSQL: p50/p95 of a
 * listJobs page (50 jobs) for each filter combination, the first page and a deep one (from a
 * cursor halfway down the ids), then how long a bulk retry of every dead job takes (a tenth of
 * the jobs: 100,000 at full size) through the admin's runBulkAction, and the claim latency of a
 * worker on another queue meanwhile (p95, max): the batches must not hold the store. Also the
 * dashboard's pages on that table: the overview, the job list and a job (p50, p95).
 *
 * The table: jobs enqueued through the store in batches of 10,000 (the fastest path that keeps
 * its side tables), in 4 queues (50/30/15/5 %) and 5 names, then moved by SQL to a mix of
 * 80 % completed, 10 % dead, 6 % ready and 4 % scheduled, as a queue that keeps its finished
 * jobs looks.
 */
import { setImmediate as nextTurn } from 'node:timers/promises'

import type { Store, ListJobsParams } from '../../src/store/store.js'
import { runBulkAction } from '../../src/admin/bulk.js'
import { createDashboard } from '../../src/dashboard/dashboard.js'
import { FRESH_STORES as STORES } from '../lib/fresh-stores.js'
import { withBenchSchema } from '../lib/postgres.js'
import { percentile, secondsSince } from '../lib/stats.js'
import type { BenchStoreKind, Figure, ScenarioDef } from '../lib/types.js'

const QUEUES = [
  'q0',
  'q0',
  'q0',
  'q0',
  'q0',
  'q0',
  'q0',
  'q0',
  'q0',
  'q0',
  'q1',
  'q1',
  'q1',
  'q1',
  'q1',
  'q1',
  'q2',
  'q2',
  'q2',
  'q3',
]
const NAMES = ['n0', 'n1', 'n2', 'n3', 'n4']
const FILL_BATCH = 10_000
const SAMPLES = 25
const PROBE_JOBS = 5_000
const fmt = (n: number): string => n.toLocaleString('en-US')

/** What each list asks, with a label for the table. */
function combinations(kind: BenchStoreKind, t0: number, size: number): [string, ListJobsParams][] {
  const recent = t0 + Math.floor(size * 0.9)
  const list: [string, ListJobsParams][] = [
    ['all', {}],
    ['state=dead', { state: 'dead' }],
    ['state=ready', { state: 'ready' }],
    ['state=completed', { state: 'completed' }],
    ['queue=q3', { queue: 'q3' }],
    ['queue=q3 state=dead', { queue: 'q3', state: 'dead' }],
    ['queue=q3 state=completed', { queue: 'q3', state: 'completed' }],
    ['queue=q0 state=scheduled', { queue: 'q0', state: 'scheduled' }],
    ['name=n4', { name: 'n4' }],
    ['name=n4 queue=q3 state=dead', { name: 'n4', queue: 'q3', state: 'dead' }],
    ['createdAfter (last 10 %)', { createdAfter: recent }],
    ['createdBefore (first 10 %) state=dead', { createdBefore: t0 + Math.floor(size * 0.1), state: 'dead' }],
    ['uniqueKey', { uniqueKey: 'key-7' }],
  ]
  if (kind === 'postgres')
    list.push([
      'payloadContains queue=q1 state=dead',
      { payloadContains: { i: 4242 }, queue: 'q1', state: 'dead' },
    ])
  return list
}

async function timeMs(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint()
  await fn()
  return secondsSince(start) * 1000
}

async function pageTimes(store: Store, params: ListJobsParams): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < SAMPLES; i++) times.push(await timeMs(() => store.listJobs({ ...params, limit: 50 })))
  return times
}

/**
 * The dashboard's pages as a browser asks for them: the overview, whose counts come from one
 * shared reading replaced in the background once a second (requests 100 ms apart, so readings
 * are replaced while they are timed), the job list unfiltered and by queue and state, and a job.
 * Also how long one reading of the store's counts takes: the work each replacement costs the store.
 */
async function dashboardPages(store: Store): Promise<Figure[]> {
  const dashboard = createDashboard({ store })
  const get = (path: string) => async () => {
    const response = await dashboard.fetch(new Request(`http://127.0.0.1:8080${path}`))
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status}`)
    await response.text()
  }
  const statsMs = await timeMs(() => store.stats())
  const { jobs } = await store.listJobs({ state: 'dead', limit: 1 })
  const pages: [string, string][] = [
    ['overview', '/'],
    ['jobs', '/jobs'],
    ['jobs queue=q3 state=dead', '/jobs?queue=q3&state=dead'],
    ['job', `/jobs/${jobs[0]!.id}`],
  ]
  const figures: Figure[] = [
    { key: 'page.stats_ms', label: 'one reading of the store counts (stats)', value: statsMs, unit: 'ms' },
  ]
  for (const [label, path] of pages) {
    const times: number[] = []
    for (let i = 0; i < SAMPLES; i++) {
      times.push(await timeMs(get(path)))
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const key = `page.${label.replace(/[^a-z0-9]+/gi, '_').toLowerCase()}`
    figures.push(
      { key: `${key}_p50`, label: `GET ${path}: p50`, value: percentile(times, 50), unit: 'ms' },
      { key: `${key}_p95`, label: `GET ${path}: p95`, value: percentile(times, 95), unit: 'ms' },
    )
  }
  return figures
}

/** Enqueues `size` jobs, created 1 ms apart from t0, one in 1,000 with a unique key. */
async function fill(store: Store, size: number, t0: number): Promise<void> {
  const { newJobOf } = await import('./dashboard-lists-jobs.js')
  for (let from = 0; from < size; from += FILL_BATCH) {
    const jobs = []
    for (let i = from; i < Math.min(size, from + FILL_BATCH); i++)
      jobs.push(newJobOf(i, QUEUES[i % QUEUES.length]!, NAMES[i % NAMES.length]!))
    // One enqueue per batch at its first job's instant; created_at is spread below by SQL.
    await store.enqueue({ jobs, now: t0 + from })
  }
}

/** The mix of states, by id (ids run 1..size in enqueue order), and created_at 1 ms apart. */
const MIX_SQL = {
  completed: `state = 'completed', finished_at = created_at + 5, attempts = 1`,
  dead: `state = 'dead', finished_at = created_at + 5, attempts = 1, last_error = '{"kind":"error","message":"x"}'`,
  scheduled: `state = 'scheduled', run_at = run_at + 86400000`,
}

async function mix(kind: BenchStoreKind, run: (sql: string) => Promise<void>, t0: number): Promise<void> {
  const table = kind === 'sqlite' ? 'ferry_jobs' : 'jobs'
  await run(`UPDATE ${table} SET created_at = ${t0} + id, updated_at = ${t0} + id`)
  await run(`UPDATE ${table} SET ${MIX_SQL.completed} WHERE id % 100 < 80`)
  await run(`UPDATE ${table} SET ${MIX_SQL.dead} WHERE id % 100 >= 80 AND id % 100 < 90`)
  await run(`UPDATE ${table} SET ${MIX_SQL.scheduled} WHERE id % 100 >= 96`)
  // As autovacuum would have it by the time anyone looks: the planner's statistics, the visibility map.
  await run(kind === 'sqlite' ? 'ANALYZE' : `VACUUM ANALYZE ${table}`)
}

function measure(kind: 'sqlite' | 'postgres'): (size: number) => Promise<Figure[]> {
  return async (size) => {
    const body = async (store: Store, run: (sql: string) => Promise<void>): Promise<Figure[]> => {
      const t0 = Date.now() - size - 60_000
      const fillStart = process.hrtime.bigint()
      await fill(store, size, t0)
      await mix(kind, run, t0)
      const figures: Figure[] = [
        {
          key: 'fill_s',
          label: `fill ${fmt(size)} jobs and mix their states`,
          value: secondsSince(fillStart),
          unit: 's',
        },
      ]
      const middle = String(Math.floor(size / 2))
      for (const [label, params] of combinations(kind, t0, size)) {
        const first = await pageTimes(store, params)
        const deep = await pageTimes(store, { ...params, cursor: middle })
        const key = label.replace(/[^a-z0-9]+/gi, '_').toLowerCase()
        figures.push(
          {
            key: `${key}.first_p50`,
            label: `${label}: first page p50`,
            value: percentile(first, 50),
            unit: 'ms',
          },
          {
            key: `${key}.first_p95`,
            label: `${label}: first page p95`,
            value: percentile(first, 95),
            unit: 'ms',
          },
          {
            key: `${key}.deep_p95`,
            label: `${label}: deep page (cursor ${middle}) p95`,
            value: percentile(deep, 95),
            unit: 'ms',
          },
        )
      }
      figures.push(...(await dashboardPages(store)))
      // The bulk retry of every dead job, with a worker's claims on another queue alongside.
      const { newJobOf } = await import('./dashboard-lists-jobs.js')
      await store.enqueue({
        jobs: Array.from({ length: PROBE_JOBS }, (_, i) => newJobOf(i, 'probe', 'probe')),
      })
      const claims: number[] = []
      let running = true
      const probe = (async () => {
        // A turn between claims, as a worker's loop has: SQLite's calls resolve without one, and
        // a loop of them alone would keep the bulk action's batches from ever running.
        while (running) {
          claims.push(
            await timeMs(() =>
              store.claim({ queues: ['probe'], limit: 1, leaseMs: 60_000, workerId: 'probe' }),
            ),
          )
          await nextTurn()
        }
      })()
      const start = process.hrtime.bigint()
      const result = await runBulkAction(store, { action: 'retry', filter: { state: 'dead' } })
      const bulkSeconds = secondsSince(start)
      running = false
      await probe
      figures.push(
        {
          key: 'bulk_retry_s',
          label: `bulk retry of ${fmt(result.changed)} dead jobs (batches of 1,000)`,
          value: bulkSeconds,
          unit: 's',
        },
        {
          key: 'claim_p95',
          label: `claim latency on another queue meanwhile, p95 of ${fmt(claims.length)}`,
          value: percentile(claims, 95),
          unit: 'ms',
        },
        { key: 'claim_max', label: 'claim latency meanwhile, max', value: Math.max(...claims), unit: 'ms' },
      )
      return figures
    }
    if (kind === 'postgres') {
      return withBenchSchema(async (bench) => {
        const store = await bench.open()
        const run = async (sql: string): Promise<void> => {
          await bench.admin(`SET search_path TO "${bench.schema}"`)
          await bench.admin(sql)
        }
        return body(store, run)
      })
    }
    return STORES.sqlite((fresh) =>
      fresh(async ({ store }) => {
        const db = (store as unknown as { db: { exec(sql: string): void } }).db
        return body(store, async (sql) => db.exec(sql))
      }),
    )
  }
}

export const dashboardListsScenario: ScenarioDef = {
  name: 'dashboard-lists',
  store: 'sqlite',
  summary:
    'SQLite (durability full): listJobs pages per filter at `size` jobs (first and deep), and a bulk retry of a tenth of them',
  fullSize: 1_000_000,
  quickSize: 5_000,
  run: measure('sqlite'),
  targets: {},
}

export const postgresDashboardListsScenario: ScenarioDef = {
  name: 'postgres-dashboard-lists',
  store: 'postgres',
  summary:
    'PostgreSQL: listJobs pages per filter at `size` jobs (first and deep), and a bulk retry of a tenth of them',
  fullSize: 1_000_000,
  quickSize: 5_000,
  run: measure('postgres'),
  targets: {},
}
