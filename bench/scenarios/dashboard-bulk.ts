/**
 * A dashboard's bulk retry beside a busy worker (issue 24): `size` dead jobs in a queue of their
 * own are retried through the admin's runBulkAction (batches of 1,000) while a worker runs 20,000
 * no-op jobs of another queue at concurrency 10 (prefetch 10). The worker's rate with the retry
 * running is set against its rate alone, measured before and after (their mean), on the same store.
 */
import { runBulkAction } from '../../src/admin/bulk.js'
import type { JobSpec } from '../../src/client/client.js'
import { FRESH_STORES as STORES, scenariosPerStore } from '../lib/fresh-stores.js'
import { enqueueNoops, timeNoopWorker } from '../lib/noop-jobs.js'
import { secondsSince } from '../lib/stats.js'
import type { BenchStoreKind, Figure } from '../lib/types.js'

const NOOP_JOBS = 20_000
const CHUNK = 10_000
const fmt = (n: number): string => n.toLocaleString('en-US')

function measure(kind: BenchStoreKind): (size: number) => Promise<Figure[]> {
  return (size) =>
    STORES[kind]((fresh) =>
      fresh(async ({ store, client }) => {
        for (let first = 0; first < size; first += CHUNK) {
          const specs: JobSpec[] = Array.from({ length: Math.min(CHUNK, size - first) }, (_, i) => ({
            name: 'bench.bulk',
            payload: { i: first + i },
            options: { queue: 'bulk' },
          }))
          await client.enqueueMany(specs)
        }
        await runBulkAction(store, { action: 'cancel', filter: { queue: 'bulk' } })
        // 20,000 at full size; fewer for the tiny runs that only check the scenario runs.
        const noops = Math.min(NOOP_JOBS, size * 10)
        // Each round's worker checks that the store then holds its jobs completed, and no more.
        const clearCompleted = () => store.purge({ state: 'completed' })
        const rateAlone = async (): Promise<number> => {
          await clearCompleted()
          await enqueueNoops(client, noops)
          return noops / (await timeNoopWorker(store, noops, { concurrency: 10, prefetch: 10 }))
        }
        const before = await rateAlone()
        await clearCompleted()
        await enqueueNoops(client, noops)
        const retryStart = process.hrtime.bigint()
        const retry = runBulkAction(store, { action: 'retry', filter: { queue: 'bulk', state: 'dead' } })
        const withRetry = noops / (await timeNoopWorker(store, noops, { concurrency: 10, prefetch: 10 }))
        const retried = await retry
        const retrySeconds = secondsSince(retryStart)
        const after = await rateAlone()
        const alone = (before + after) / 2
        if (retried.changed !== size)
          throw new Error(`the retry changed ${retried.changed} of ${size} dead jobs`)
        return [
          {
            key: 'alone_per_s',
            label: 'no-op jobs alone (mean of before and after)',
            value: alone,
            unit: '/s',
          },
          {
            key: 'with_retry_per_s',
            label: `no-op jobs while ${fmt(size)} dead jobs are retried`,
            value: withRetry,
            unit: '/s',
          },
          {
            key: 'change_pct',
            label: 'change of the no-op rate with the retry running',
            value: ((withRetry - alone) / alone) * 100,
            unit: '%',
            mayBeNegative: true,
            mayBeZero: true,
          },
          {
            key: 'retry_s',
            label: `the bulk retry of ${fmt(size)} dead jobs`,
            value: retrySeconds,
            unit: 's',
          },
        ] satisfies Figure[]
      }),
    )
}

const scenarios = scenariosPerStore(
  'dashboard-bulk',
  'no-op throughput of a worker (20,000 jobs, concurrency 10) alone and while a bulk retry of `size` dead jobs runs',
  { fullSize: 100_000, quickSize: 2_000 },
  measure,
)
export const dashboardBulkScenario = scenarios.sqlite
export const postgresDashboardBulkScenario = scenarios.postgres
