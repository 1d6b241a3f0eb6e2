import { Redis } from 'ioredis'
import type { JobSpec } from '../../src/client/client.js'
import { payloadOfBytes } from '../lib/payload.js'
import { openRedisBench, REDIS_BENCH_SETUP, withBenchRedis } from '../lib/redis.js'
import { measureRedisMemory } from '../lib/redis-memory.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

const CHUNK = 10_000

/**
 * Redis memory per waiting job (REDIS_BENCH_SETUP): `size` ready jobs with a 520-byte payload in
 * one queue, MEMORY USAGE (SAMPLES 0) summed over the namespace's keys ÷ jobs. Once with Redis
 * defaults, where a hash holding a value over hash-max-listpack-value (64 bytes) is a hashtable,
 * and once after CONFIG SET hash-max-listpack-value 1024, which keeps such a job hash a listpack.
 */
export async function redisMemory(size: number): Promise<Figure[]> {
  return withBenchRedis('redis-memory', async (server) => {
    const admin = new Redis(server.url)
    const figures: Figure[] = []
    try {
      for (const [tag, text, listpackValue] of [
        ['default', 'Redis defaults', null],
        ['listpack1024', 'hash-max-listpack-value 1024', '1024'],
      ] as const) {
        if (listpackValue !== null) await admin.config('SET', 'hash-max-listpack-value', listpackValue)
        const bench = await openRedisBench(server, `memory-${tag}`)
        try {
          for (let first = 0; first < size; first += CHUNK) {
            const count = Math.min(CHUNK, size - first)
            const specs: JobSpec[] = new Array(count)
            for (let i = 0; i < count; i++)
              specs[i] = { name: 'bench.memory', payload: payloadOfBytes(520, first + i) }
            await bench.client.enqueueMany(specs)
          }
          const { bytesPerJob } = await measureRedisMemory(admin, bench.store.keys.pattern, size)
          figures.push({
            key: `${tag}.bytes`,
            label: `bytes per waiting job (520-byte payload), ${text}`,
            value: bytesPerJob,
            unit: 'B/job',
          })
        } finally {
          await bench.close()
        }
      }
    } finally {
      admin.disconnect()
    }
    return figures
  })
}

export const redisMemoryScenario: ScenarioDef = {
  name: 'redis-memory',
  store: 'redis',
  summary: `Redis (${REDIS_BENCH_SETUP}): memory per waiting job with a 520-byte payload (100,000 jobs)`,
  fullSize: 100_000,
  quickSize: 1_000,
  run: redisMemory,
  targets: {},
}
