import { Redis } from 'ioredis'
import { queuesShape, timeClaims, WARMUP_CLAIMS } from '../lib/claims.js'
import { commandStats, openRedisBench, REDIS_BENCH_SETUP, withBenchRedis } from '../lib/redis.js'
import { percentile } from '../lib/stats.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

const QUEUE_COUNTS = [1, 5, 20, 100] as const
const QUEUE = 'jobs'
const SETUP_CHUNK = 10_000

/**
 * The multi-queue claim on Redis (REDIS_BENCH_SETUP): a worker watching 1, 5, 20 or 100 queues of
 * which only the last has jobs (a backlog of `size` ready jobs), claiming one job at a time. Each
 * claim is one EVALSHA (claim.lua visits every queue inside the server); the figures are the
 * claim's latency p50 per queue count, the 100-to-1 ratio, and the EVALSHA calls the server counted
 * per claim (INFO commandstats): the round trips. `size`/10 timed claims after 20 untimed ones.
 * Every claim writes, so with appendfsync always its latency is mostly the fsync: 1 and 100 queues
 * are timed again after CONFIG SET appendfsync no, where what is left is the script's own cost.
 */
export async function redisClaim(size: number): Promise<Figure[]> {
  return withBenchRedis('redis-claim', async (server) => {
    const claims = Math.max(10, Math.round(size / 10))
    const figures: Figure[] = []
    const p50s = new Map<number, number>()
    const nofsync = new Map<number, number>()
    const admin = new Redis(server.url)
    try {
      for (const [count, fsync] of [
        ...QUEUE_COUNTS.map((count) => [count, 'always'] as const),
        [1, 'no'] as const,
        [100, 'no'] as const,
      ]) {
        await admin.config('SET', 'appendfsync', fsync)
        const tag = fsync === 'always' ? `q${count}` : `nofsync.q${count}`
        const suffix = fsync === 'always' ? '' : ' [appendfsync no: the script alone]'
        const bench = await openRedisBench(server, `claim-${tag}`)
        try {
          const shape = queuesShape(count, QUEUE)
          for (let first = 0; first < size; first += SETUP_CHUNK) {
            const n = Math.min(SETUP_CHUNK, size - first)
            await bench.client.enqueueMany(
              Array.from({ length: n }, (_, i) => ({
                name: 'bench.claim',
                payload: { seq: first + i },
                options: { queue: QUEUE },
              })),
            )
          }
          const before = (await commandStats(admin, 'evalsha')).calls
          const latencies = await timeClaims(bench.store, shape, claims)
          // Warm-up claims included: every claim of the run counts, one EVALSHA each or not.
          const roundTrips =
            ((await commandStats(admin, 'evalsha')).calls - before) / (WARMUP_CLAIMS + claims)
          const p50 = percentile(latencies, 50)
          if (fsync === 'always') p50s.set(count, p50)
          else nofsync.set(count, p50)
          figures.push(
            {
              key: `${tag}.p50`,
              label: `${shape.text}, p50${suffix}`,
              value: p50,
              unit: 'ms',
            },
            {
              key: `${tag}.round_trips`,
              label: `round trips (EVALSHA) per claim, ${count} queue(s)${suffix}`,
              value: roundTrips,
              unit: '×',
            },
          )
        } finally {
          await bench.close()
        }
      }
    } finally {
      admin.disconnect()
    }
    figures.push(
      {
        key: 'ratio_100_to_1',
        label: 'claim p50 over 100 queues ÷ over 1 queue',
        value: p50s.get(100)! / p50s.get(1)!,
        unit: '×',
      },
      {
        key: 'nofsync.ratio_100_to_1',
        label: 'the same [appendfsync no: the script alone]',
        value: nofsync.get(100)! / nofsync.get(1)!,
        unit: '×',
      },
    )
    return figures
  })
}

export const redisClaimScenario: ScenarioDef = {
  name: 'redis-claim',
  store: 'redis',
  summary: `Redis (${REDIS_BENCH_SETUP}): claim over 1, 5, 20, 100 queues where only the last has jobs: latency, round trips`,
  fullSize: 20_000,
  quickSize: 200,
  run: redisClaim,
  targets: { 'q100.round_trips': { op: '<=', value: 1 } },
}
