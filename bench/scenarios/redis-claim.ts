import { Redis } from 'ioredis'
import {
  behindForeignShape,
  FOREIGN_NAME,
  OWN_NAME,
  queuesShape,
  timeClaims,
  WARMUP_CLAIMS,
  type ClaimShape,
} from '../lib/claims.js'
import { commandStats, openRedisBench, REDIS_BENCH_SETUP, withBenchRedis } from '../lib/redis.js'
import { percentile } from '../lib/stats.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

const QUEUE_COUNTS = [1, 5, 20, 100] as const
const QUEUE = 'jobs'
const SETUP_CHUNK = 10_000

/**
 * The multi-queue claim on Redis (REDIS_BENCH_SETUP): a worker watching 1, 5, 20 or 100 queues of
 * which only the last has jobs (a backlog of `size` ready jobs), claiming one job at a time. Each
 * claim is one FCALL (claim.lua visits every queue inside the server); the figures are the
 * claim's latency p50 per queue count, the 100-to-1 ratio, and the calls of Ferry's Lua the server
 * counted per claim (FCALL, or EVALSHA and EVAL where functions cannot be loaded; INFO
 * commandstats): the round trips. `size`/10 timed claims after 20 untimed ones.
 * Every claim writes, so with appendfsync always its latency is mostly the fsync: 1 and 100 queues
 * are timed again after CONFIG SET appendfsync no, where what is left is the script's own cost.
 * Then a claim of one job of its name (ClaimParams.names) from a queue where `size` × 5 ready jobs
 * of another name stand ahead (a higher priority), against the same claim without names on a
 * queue of its own name only, both under appendfsync no: the filter must cost the same.
 */
/** The calls of Ferry's Lua the server has run so far: as functions, or as scripts. */
async function luaCalls(admin: Redis): Promise<number> {
  let calls = 0
  for (const command of ['fcall', 'evalsha', 'eval']) calls += (await commandStats(admin, command)).calls
  return calls
}

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
          await fill(bench.client, OWN_NAME, size, 0)
          const before = await luaCalls(admin)
          const latencies = await timeClaims(bench.store, shape, claims)
          // Warm-up claims included: every claim of the run counts, one call each or not.
          const roundTrips = ((await luaCalls(admin)) - before) / (WARMUP_CLAIMS + claims)
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
              label: `round trips (calls of Ferry's Lua) per claim, ${count} queue(s)${suffix}`,
              value: roundTrips,
              unit: '×',
            },
          )
        } finally {
          await bench.close()
        }
      }
      // The names filter, behind a backlog of another name.
      await admin.config('SET', 'appendfsync', 'no')
      const foreign = size * 5
      const behind = behindForeignShape(QUEUE, foreign)
      const plain: ClaimShape = { tag: 'plain', text: 'claim limit 1', queues: [QUEUE], limit: 1 }
      const alone = new Map<ClaimShape, number>()
      for (const shape of [plain, behind]) {
        const bench = await openRedisBench(server, `claim-${shape.tag}`)
        try {
          if (shape === behind) await fill(bench.client, FOREIGN_NAME, foreign, 1)
          await fill(bench.client, OWN_NAME, claims + WARMUP_CLAIMS, 0)
          const p50 = percentile(await timeClaims(bench.store, shape, claims), 50)
          alone.set(shape, p50)
          figures.push({
            key: `nofsync.${shape.tag}.p50`,
            label: `${shape.text}, p50 [appendfsync no: the script alone]`,
            value: p50,
            unit: 'ms',
          })
        } finally {
          await bench.close()
        }
      }
      figures.push({
        key: 'nofsync.names_behind_over_plain',
        label: 'claim p50 of its name behind another name ÷ without names, alone [appendfsync no]',
        value: alone.get(behind)! / alone.get(plain)!,
        unit: '×',
      })
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

/** `count` ready jobs of `name` on QUEUE at `priority`, enqueued in chunks (untimed). */
async function fill(
  client: Awaited<ReturnType<typeof openRedisBench>>['client'],
  name: string,
  count: number,
  priority: number,
): Promise<void> {
  for (let first = 0; first < count; first += SETUP_CHUNK) {
    const n = Math.min(SETUP_CHUNK, count - first)
    await client.enqueueMany(
      Array.from({ length: n }, (_, i) => ({
        name,
        payload: { seq: first + i },
        options: { queue: QUEUE, priority },
      })),
    )
  }
}

export const redisClaimScenario: ScenarioDef = {
  name: 'redis-claim',
  store: 'redis',
  summary: `Redis (${REDIS_BENCH_SETUP}): claim over 1, 5, 20, 100 queues where only the last has jobs: latency, round trips; of one name behind 100,000 of another`,
  fullSize: 20_000,
  quickSize: 200,
  run: redisClaim,
  targets: { 'q100.round_trips': { op: '<=', value: 1 } },
}
