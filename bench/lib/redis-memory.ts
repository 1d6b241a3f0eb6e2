import type { Redis } from 'ioredis'

export interface RedisMemory {
  bytesPerJob: number
  /** Bytes per job by kind of key (job hashes, ready zset, jobs index, …). */
  byKind: Record<string, number>
}

/**
 * Sums MEMORY USAGE (SAMPLES 0: every element) over the keys matching `pattern` and divides by
 * `jobs`, by kind of key: the key name up to its first id or queue name.
 */
export async function measureRedisMemory(redis: Redis, pattern: string, jobs: number): Promise<RedisMemory> {
  const byKind: Record<string, number> = {}
  let total = 0
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = next
    for (const key of keys) {
      const bytes = Number(await redis.memory('USAGE', key, 'SAMPLES', 0))
      const kind = /\}:([a-z]+)/.exec(key)?.[1] ?? key
      byKind[kind] = (byKind[kind] ?? 0) + bytes
      total += bytes
    }
  } while (cursor !== '0')
  for (const kind of Object.keys(byKind)) byKind[kind] = Math.round(byKind[kind]! / jobs)
  return { bytesPerJob: total / jobs, byKind }
}
