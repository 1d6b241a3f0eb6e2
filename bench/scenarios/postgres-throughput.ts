import { setTimeout as sleep } from 'node:timers/promises'
import { enqueueNoops } from '../lib/noop-jobs.js'
import { startChildWorker, type ChildWorker } from '../lib/child-worker.js'
import { withBenchSchema } from '../lib/postgres.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

const WORKERS = 2
const CONCURRENCY = 32
const STALL_TIMEOUT_MS = 60_000
const fmt = (n: number): string => n.toLocaleString('en-US')

/**
 * No-op jobs end to end on PostgreSQL with 2 `ferry work` processes (inline, concurrency 32 each,
 * handler bench.noop): both start idle on an empty schema; then `size` jobs are enqueued in one
 * transaction (enqueueMany, chunks of 10,000 in one call each) and the workers, woken by NOTIFY,
 * run them. The time is the server's: from the jobs' created_at (the enqueue's statement time) to
 * the last finished_at, so neither process start-up nor polling for the end is counted.
 */
export async function postgresThroughput(size: number): Promise<Figure[]> {
  return withBenchSchema(async (bench) => {
    const client = await bench.client()
    const store = client.store
    const workers: ChildWorker[] = []
    try {
      for (let i = 0; i < WORKERS; i++)
        workers.push(
          await startChildWorker({ storeUrl: bench.url, concurrency: CONCURRENCY, timeLimitMs: 300_000 }),
        )
      await enqueueNoops(client, size)
      let done = 0
      let lastProgressAt = Date.now()
      while (done < size) {
        await sleep(200)
        for (const w of workers) w.assertAlive()
        const completed = (await store.stats()).reduce((sum, q) => sum + q.completed + q.dead, 0)
        if (completed > done) lastProgressAt = Date.now()
        done = completed
        if (Date.now() - lastProgressAt > STALL_TIMEOUT_MS) throw new Error(`stalled at ${done} of ${size}`)
      }
    } finally {
      for (const w of workers) await w.stop()
    }
    const [row] = await bench.admin<{ first: string; last: string; dead: string }>(
      `SELECT min(created_at) AS first, max(finished_at) AS last, count(*) FILTER (WHERE state <> 'completed') AS dead
       FROM "${bench.schema}".jobs`,
    )
    if (Number(row!.dead) !== 0) throw new Error(`${row!.dead} jobs did not complete`)
    const seconds = (Number(row!.last) - Number(row!.first)) / 1000
    return [
      {
        key: 'total_s',
        label: `${fmt(size)} no-op jobs, ${WORKERS} worker processes × concurrency ${CONCURRENCY} [postgres]`,
        value: seconds,
        unit: 's',
      },
      {
        key: 'jobs_per_s',
        label: `jobs/s, ${WORKERS} worker processes [postgres]`,
        value: size / seconds,
        unit: '/s',
      },
    ]
  })
}

export const postgresThroughputScenario: ScenarioDef = {
  name: 'postgres-throughput',
  store: 'postgres',
  summary: 'PostgreSQL: no-op jobs end to end, 2 ferry work processes (inline, concurrency 32 each)',
  fullSize: 20_000,
  quickSize: 200,
  run: postgresThroughput,
  targets: { jobs_per_s: { op: '>=', value: 5000 } },
}
