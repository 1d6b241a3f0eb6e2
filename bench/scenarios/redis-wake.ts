import { withChildWorker } from '../lib/child-worker.js'
import { openRedisBench, REDIS_BENCH_SETUP, withBenchRedis } from '../lib/redis.js'
import { percentile } from '../lib/stats.js'
import type { Figure, ScenarioDef } from '../lib/types.js'
import { redisWakeFloor } from '../lib/wake-floor.js'
import { sampleWakes, WAKE_GAP } from '../lib/wake-samples.js'

/**
 * Wake-up latency across processes on Redis (REDIS_BENCH_SETUP), sampled as on every store
 * (bench/lib/wake-samples.ts): an idle `ferry work` child subscribed to the namespace's wake
 * channel, and this process enqueuing one job at a time.
 * Then the floor (bench/lib/wake-floor.ts): what a bare durable write and a message cost with the
 * same gaps, which no wake-up can beat.
 */
export async function redisWake(samples: number): Promise<Figure[]> {
  return withBenchRedis('redis-wake', async (server) => {
    const bench = await openRedisBench(server, 'wake')
    try {
      const { wake, commit } = await withChildWorker(
        { storeUrl: bench.url, timeLimitMs: (60 + samples) * 1000 },
        (child) => sampleWakes(child, bench.client, samples),
      )
      const floor = await redisWakeFloor(server.url, samples, WAKE_GAP)
      return [
        {
          key: 'p50',
          label: 'enqueue → handler start, other process, p50',
          value: percentile(wake, 50),
          unit: 'ms',
        },
        {
          key: 'p99',
          label: 'enqueue → handler start, other process, p99',
          value: percentile(wake, 99),
          unit: 'ms',
        },
        {
          key: 'max',
          label: 'enqueue → handler start, other process, max',
          value: percentile(wake, 100),
          unit: 'ms',
        },
        {
          key: 'commit.p50',
          label: 'of which enqueue → enqueue resolved (AOF fsynced), p50',
          value: percentile(commit, 50),
          unit: 'ms',
        },
        {
          key: 'floor.p50',
          label: 'floor: a SET + PUBLISH script (fsynced) → heard on another connection, same gaps, p50',
          value: percentile(floor, 50),
          unit: 'ms',
        },
      ] satisfies Figure[]
    } finally {
      await bench.close()
    }
  })
}

export const redisWakeScenario: ScenarioDef = {
  name: 'redis-wake',
  store: 'redis',
  summary: `Redis (${REDIS_BENCH_SETUP}): enqueue → handler start in an idle \`ferry work\` child, p50/p99/max over 200 jobs`,
  fullSize: 200,
  quickSize: 10,
  run: redisWake,
  targets: { p50: { op: '<', value: 1 }, p99: { op: '<', value: 10 } },
}
