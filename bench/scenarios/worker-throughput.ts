import type { SqliteDurability } from '../../src/sqlite.js'
import { enqueueNoops, timeNoopWorker } from '../lib/noop-jobs.js'
import { openBenchStore } from '../lib/store.js'
import { withTempDir } from '../lib/temp.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

interface Row {
  tag: string
  concurrency: number
  durability: SqliteDurability
  /** Jobs run, as a fraction of the scenario's size. */
  share: number
}

const ROWS: readonly Row[] = [
  // One job at a time costs one synced commit per job (its settlement and the next claim share
  // it): the rate is the disk's sync rate whatever the count, and 100,000 jobs would take 1–4
  // minutes per run on this disk. A tenth of the jobs measures the same rate.
  { tag: 'c1', concurrency: 1, durability: 'full', share: 0.1 },
  { tag: 'c32', concurrency: 32, durability: 'full', share: 1 },
  { tag: 'c32.normal', concurrency: 32, durability: 'normal', share: 1 },
]

const fmt = (n: number): string => n.toLocaleString('en-US')

/**
 * No-op jobs end to end through one in-process Worker (inline executor, handler `async () => {}`):
 * `size` jobs (a tenth of them at concurrency 1, see ROWS) are enqueued first (client.enqueueMany in chunks of 10,000, durability 'full',
 * untimed), then the store is reopened with the row's durability and a Worker started on it. The
 * clock runs from worker.start() until the `size`-th 'job:completed' event, counted by a listener
 * (one increment per event); the event comes after the job's settlement has committed. Each row
 * has its own fresh database: concurrency 1 and 32 under 'full', and 32 under 'normal' for
 * reference.
 */
export async function workerThroughput(size: number): Promise<Figure[]> {
  const figures: Figure[] = []
  for (const row of ROWS) {
    const jobs = Math.max(1, Math.round(size * row.share))
    const seconds = await measure(jobs, row)
    const suffix = row.durability === 'full' ? '' : ` [${row.durability}]`
    figures.push(
      {
        key: `${row.tag}.total_s`,
        label: `${fmt(jobs)} no-op jobs, concurrency ${row.concurrency}${suffix}`,
        value: seconds,
        unit: 's',
      },
      {
        key: `${row.tag}.jobs_per_s`,
        label: `jobs/s, concurrency ${row.concurrency}${suffix}`,
        value: jobs / seconds,
        unit: '/s',
      },
    )
  }
  return figures
}

async function measure(size: number, row: Row): Promise<number> {
  return withTempDir('worker-throughput', async (dir) => {
    // Filled under 'full', then reopened with the row's durability.
    const filling = await openBenchStore(dir, 'full')
    try {
      await enqueueNoops(filling.client, size)
    } finally {
      await filling.close()
    }
    const bench = await openBenchStore(dir, row.durability)
    try {
      return await timeNoopWorker(bench.store, size, { concurrency: row.concurrency })
    } finally {
      await bench.close()
    }
  })
}

export const workerThroughputScenario: ScenarioDef = {
  name: 'worker-throughput',
  summary:
    'no-op jobs through one in-process Worker (inline): 100,000 at concurrency 32 (durability full, and normal), 10,000 at concurrency 1',
  fullSize: 100_000,
  quickSize: 2_000,
  run: workerThroughput,
  targets: { 'c32.jobs_per_s': { op: '>=', value: 20_000 } },
}
