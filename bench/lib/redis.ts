import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import type { Redis } from 'ioredis'
import { createClient, type Client } from '../../src/client/client.js'
import { RedisStore } from '../../src/redis.js'
import { startRedisServer, type OwnRedisServer } from '../../tests/support/redis-server.js'
import { withTempDir } from './temp.js'

/** How every Redis scenario's server runs: the durable setting docs/backends.md asks for. */
export const REDIS_BENCH_SETUP = 'own redis-server, appendonly yes, appendfsync always'

/**
 * Runs fn with a redis-server of its own, AOF with appendfsync always, working in a directory
 * under .bench-tmp/ (the repository's disk: /tmp may be a RAM disk, where an fsync is free).
 */
export async function withBenchRedis<T>(
  label: string,
  fn: (server: OwnRedisServer) => Promise<T>,
): Promise<T> {
  return withTempDir(label, async (dir) => {
    const server = await startRedisServer({ dir, appendfsync: 'always' })
    try {
      return await fn(server)
    } finally {
      await server.close()
    }
  })
}

export interface RedisBench {
  store: RedisStore
  client: Client
  url: string
  close(): Promise<void>
}

/** A store on `namespace` of the server, with a producer client. */
export async function openRedisBench(server: OwnRedisServer, namespace: string): Promise<RedisBench> {
  // REDIS_BENCH_SETUP says how the server runs; redis-claim turns fsync off on purpose.
  const store = await RedisStore.open({ url: server.url, namespace, onWarning: () => {} })
  const client = createClient({ store })
  return {
    store,
    client,
    url: `${server.url}?namespace=${namespace}`,
    async close() {
      try {
        await client.close()
      } finally {
        await store.close()
      }
    },
  }
}

/** The Store line of a RESULTS.md section for the Redis scenarios: each starts a server of its own. */
export async function describeRedis(): Promise<string> {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' })
  const version = /v=(\S+)/.exec(probe.stdout ?? '')?.[1] ?? 'version unknown'
  const require = createRequire(import.meta.url)
  const client = (require('ioredis/package.json') as { version: string }).version
  return `redis (redis-server ${version}, client ioredis ${client}): ${REDIS_BENCH_SETUP}, a server per scenario on a free port`
}

/** The server's calls of one command so far (INFO commandstats), and how many of them failed. */
export async function commandStats(
  redis: Redis,
  command: string,
): Promise<{ calls: number; failed: number }> {
  const info = await redis.info('commandstats')
  const line = new RegExp(`^cmdstat_${command}:calls=(\\d+),.*failed_calls=(\\d+)`, 'm').exec(info)
  return line === null ? { calls: 0, failed: 0 } : { calls: Number(line[1]), failed: Number(line[2]) }
}
