import { enqueueNoops, timeNoopWorker } from '../lib/noop-jobs.js'
import { openRedisBench, REDIS_BENCH_SETUP, withBenchRedis } from '../lib/redis.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

/** Concurrency 10 (the BullMQ peer figure's setting), the same with 10 jobs claimed ahead, and 32. */
const SETTINGS = [
  { key: 'c10', concurrency: 10, prefetch: 0 },
  { key: 'c10p10', concurrency: 10, prefetch: 10 },
  { key: 'c32', concurrency: 32, prefetch: 0 },
] as const
const fmt = (n: number): string => n.toLocaleString('en-US')

/**
 * No-op jobs end to end through one in-process Worker (inline, `async () => {}`) on Redis
 * (REDIS_BENCH_SETUP), as worker-throughput does on SQLite: `size` jobs enqueued first
 * (enqueueMany × 10,000, untimed) on a fresh namespace, then the clock runs from worker.start()
 * until the `size`-th 'job:completed' event (after its settlement was acknowledged), for each of
 * SETTINGS.
 */
export async function redisThroughput(size: number): Promise<Figure[]> {
  return withBenchRedis('redis-throughput', async (server) => {
    const figures: Figure[] = []
    for (const { key, concurrency, prefetch } of SETTINGS) {
      const seconds = await measure(server, size, key, { concurrency, prefetch })
      const setting = `concurrency ${concurrency}${prefetch > 0 ? `, prefetch ${prefetch}` : ''}`
      figures.push(
        { key: `${key}.total_s`, label: `${fmt(size)} no-op jobs, ${setting}`, value: seconds, unit: 's' },
        { key: `${key}.jobs_per_s`, label: `jobs/s, ${setting}`, value: size / seconds, unit: '/s' },
      )
    }
    return figures
  })
}

async function measure(
  server: Parameters<typeof openRedisBench>[0],
  size: number,
  key: string,
  { concurrency, prefetch }: { concurrency: number; prefetch: number },
): Promise<number> {
  const bench = await openRedisBench(server, `throughput-${key}`)
  try {
    await enqueueNoops(bench.client, size)
    return await timeNoopWorker(bench.store, size, { concurrency, prefetch })
  } finally {
    await bench.close()
  }
}

export const redisThroughputScenario: ScenarioDef = {
  name: 'redis-throughput',
  store: 'redis',
  summary: `Redis (${REDIS_BENCH_SETUP}): 100,000 no-op jobs through one in-process Worker (inline), concurrency 10 (without and with prefetch 10) and 32`,
  fullSize: 100_000,
  quickSize: 500,
  run: redisThroughput,
  targets: {
    'c10.jobs_per_s': { op: '>=', value: 12_000 },
    'c10p10.jobs_per_s': { op: '>=', value: 12_000 },
    'c32.jobs_per_s': { op: '>=', value: 12_000 },
  },
}
