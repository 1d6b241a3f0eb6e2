/**
 * What Ferry's Prometheus metrics cost: a scrape of a store holding `size` jobs (the gauges read
 * the store's stats, a count over every row on the SQL stores, in the background: the first
 * scrape waits for that read, the later ones are served from it), and the throughput of serial
 * enqueues and of no-op jobs with the metrics on (an instrumented store, a worker observed) against
 * off, on fresh stores.
 */
import { Registry } from 'prom-client'

import { createClient } from '../../src/client/client.js'
import { registerFerryMetrics } from '../../src/metrics/ferry-metrics.js'
import { FRESH_STORES as STORES, scenariosPerStore } from '../lib/fresh-stores.js'
import { enqueueNoops, NOOP_JOB, timeNoopWorker } from '../lib/noop-jobs.js'
import { median, secondsSince } from '../lib/stats.js'
import type { BenchStoreKind, Figure } from '../lib/types.js'

const LATER_SCRAPES = 20
const fmt = (n: number): string => n.toLocaleString('en-US')

/** Milliseconds that fn took. */
async function timeMs(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint()
  await fn()
  return secondsSince(start) * 1000
}

/** `size` ready no-op jobs, then the store's stats alone, the first scrape, and the median of later ones. */
function scrape(kind: BenchStoreKind): (size: number) => Promise<Figure[]> {
  return (size) =>
    STORES[kind]((fresh) =>
      fresh(async ({ store, client }) => {
        await enqueueNoops(client, size)
        const statsMs = await timeMs(() => store.stats())
        const registry = new Registry()
        const metrics = registerFerryMetrics({ registry, store })
        try {
          const firstMs = await timeMs(() => registry.metrics())
          const later: number[] = []
          for (let i = 0; i < LATER_SCRAPES; i++) later.push(await timeMs(() => registry.metrics()))
          return [
            { key: 'stats.ms', label: `store.stats() over ${fmt(size)} jobs`, value: statsMs, unit: 'ms' },
            {
              key: 'scrape.first_ms',
              label: 'first scrape (waits for the stats read)',
              value: firstMs,
              unit: 'ms',
            },
            {
              key: 'scrape.ms',
              label: `later scrapes, median of ${LATER_SCRAPES} (served from the last reading)`,
              value: median(later),
              unit: 'ms',
            },
          ] satisfies Figure[]
        } finally {
          metrics.close()
        }
      }),
    )
}

/** Rounds of each side, alternating off and on, so that a drift of the shared machine weighs on both. */
const OVERHEAD_ROUNDS = 3

/**
 * Serial enqueues of size / 10 jobs, then `size` no-op jobs at concurrency 10, on fresh stores,
 * metrics off and on in alternating rounds (off, on, on, off, off, on); each side's rate is over
 * all of its rounds.
 */
function overhead(kind: BenchStoreKind): (size: number) => Promise<Figure[]> {
  return async (size) => {
    const serial = Math.max(100, Math.floor(size / 10 / OVERHEAD_ROUNDS))
    const jobs = Math.max(100, Math.floor(size / OVERHEAD_ROUNDS))
    const measure = (withMetrics: boolean) =>
      STORES[kind]((fresh) =>
        fresh(async ({ store: raw }) => {
          const registry = new Registry()
          const metrics = withMetrics ? registerFerryMetrics({ registry, store: raw }) : null
          try {
            const store = metrics?.instrumentStore(raw) ?? raw
            const client = createClient({ store })
            const enqueueMs = await timeMs(async () => {
              for (let i = 0; i < serial; i++) await client.enqueue(NOOP_JOB, { i }, { queue: 'serial' })
            })
            await enqueueNoops(client, jobs)
            const seconds = await timeNoopWorker(store, jobs, {
              concurrency: 10,
              observe: (worker) => metrics?.observeWorker(worker),
            })
            // Scraped once, so that the metrics are what a scraped process keeps.
            await registry.metrics()
            return { enqueueSeconds: enqueueMs / 1000, jobSeconds: seconds }
          } finally {
            metrics?.close()
          }
        }),
      )
    const sums = new Map<boolean, { enqueueSeconds: number; jobSeconds: number }>()
    for (let round = 0; round < OVERHEAD_ROUNDS; round++) {
      const order = round % 2 === 0 ? [false, true] : [true, false]
      for (const withMetrics of order) {
        const measured = await measure(withMetrics)
        const sum = sums.get(withMetrics) ?? { enqueueSeconds: 0, jobSeconds: 0 }
        sums.set(withMetrics, {
          enqueueSeconds: sum.enqueueSeconds + measured.enqueueSeconds,
          jobSeconds: sum.jobSeconds + measured.jobSeconds,
        })
      }
    }
    const rates = (withMetrics: boolean) => {
      const { enqueueSeconds, jobSeconds } = sums.get(withMetrics)!
      return {
        enqueuePerS: (serial * OVERHEAD_ROUNDS) / enqueueSeconds,
        jobsPerS: (jobs * OVERHEAD_ROUNDS) / jobSeconds,
      }
    }
    const off = rates(false)
    const on = rates(true)
    const pct = (a: number, b: number) => ((a - b) / a) * 100
    return [
      {
        key: 'enqueue.off.per_s',
        label: `serial enqueues (${fmt(serial * OVERHEAD_ROUNDS)}), metrics off`,
        value: off.enqueuePerS,
        unit: '/s',
      },
      { key: 'enqueue.on.per_s', label: 'serial enqueues, metrics on', value: on.enqueuePerS, unit: '/s' },
      {
        key: 'enqueue.overhead_pct',
        label: 'serial enqueue throughput lost to metrics',
        value: pct(off.enqueuePerS, on.enqueuePerS),
        unit: '%',
        mayBeNegative: true,
        mayBeZero: true,
      },
      {
        key: 'worker.off.per_s',
        label: `no-op jobs (${fmt(jobs * OVERHEAD_ROUNDS)}), concurrency 10, metrics off`,
        value: off.jobsPerS,
        unit: '/s',
      },
      {
        key: 'worker.on.per_s',
        label: 'no-op jobs, concurrency 10, metrics on',
        value: on.jobsPerS,
        unit: '/s',
      },
      {
        key: 'worker.overhead_pct',
        label: 'no-op throughput lost to metrics',
        value: pct(off.jobsPerS, on.jobsPerS),
        unit: '%',
        mayBeNegative: true,
        mayBeZero: true,
      },
    ]
  }
}

const scrapes = scenariosPerStore(
  'metrics-scrape',
  'a Prometheus scrape of the metrics with the store holding `size` jobs: stats read, first scrape, later ones',
  { fullSize: 1_000_000, quickSize: 2_000 },
  scrape,
)
export const metricsScrapeScenario = scrapes.sqlite
export const postgresMetricsScrapeScenario = scrapes.postgres

const overheads = scenariosPerStore(
  'metrics-overhead',
  'serial enqueue and no-op job throughput with the Prometheus metrics on against off (overhead in %)',
  { fullSize: 20_000, quickSize: 1_000 },
  overhead,
)
export const metricsOverheadScenario = overheads.sqlite
export const postgresMetricsOverheadScenario = overheads.postgres
export const redisMetricsOverheadScenario = overheads.redis
