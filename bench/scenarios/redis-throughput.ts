import type { JobSpec } from '../../src/client/client.js'
import { Worker } from '../../src/worker/worker.js'
import { openRedisBench, REDIS_BENCH_SETUP, withBenchRedis } from '../lib/redis.js'
import { secondsSince } from '../lib/stats.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

const SETUP_CHUNK = 10_000
const JOB_NAME = 'bench.noop'
const STALL_TIMEOUT_MS = 60_000
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
    for (let first = 0; first < size; first += SETUP_CHUNK) {
      const count = Math.min(SETUP_CHUNK, size - first)
      const specs: JobSpec[] = new Array(count)
      for (let i = 0; i < count; i++) specs[i] = { name: JOB_NAME, payload: { seq: first + i } }
      await bench.client.enqueueMany(specs)
    }
    const worker = new Worker({
      store: bench.store,
      handlers: { [JOB_NAME]: async () => {} },
      queues: ['default'],
      concurrency,
      prefetch,
    })
    let completed = 0
    let lastProgressAt = Date.now()
    let watchdog: NodeJS.Timeout | undefined
    const allCompleted = new Promise<void>((resolve, reject) => {
      worker.on('job:completed', () => {
        if (++completed === size) resolve()
        lastProgressAt = Date.now()
      })
      const fail = (what: string) => (detail: unknown) =>
        reject(new Error(`${what} during the run: ${JSON.stringify(detail)}`))
      worker.on('job:failed', fail('a job failed'))
      worker.on('job:dead', fail('a job died'))
      worker.on('job:lease-lost', fail('a lease was lost'))
      worker.on('worker:error', (error) => reject(error as Error))
      watchdog = setInterval(() => {
        if (Date.now() - lastProgressAt > STALL_TIMEOUT_MS)
          reject(new Error(`no job completed for ${STALL_TIMEOUT_MS} ms (${completed} of ${size} done)`))
      }, 1000)
    })
    let seconds: number
    try {
      const start = process.hrtime.bigint()
      await worker.start()
      await allCompleted
      seconds = secondsSince(start)
    } finally {
      clearInterval(watchdog)
      await worker.stop({ graceful: false })
    }
    const done = (await bench.store.stats()).reduce((sum, queue) => sum + queue.completed, 0)
    if (done !== size) throw new Error(`${done} of ${size} jobs are completed in the store`)
    return seconds
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
