/**
 * The fresh place each measurement runs on, made by the driver and removed after it: a directory
 * under .bench-tmp/ (the repository's disk) for SQLite, a database of its own for PostgreSQL, a
 * redis-server of its own (AOF, appendfsync always) for Redis. Nothing the benchmark did not
 * create is ever dropped or flushed, and no other Redis server is ever used.
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import pg from 'pg'
import { BENCH_POSTGRES_URL } from '../../lib/postgres.js'
import { REDIS_BENCH_SETUP, withBenchRedis } from '../../lib/redis.js'
import { withTempDir } from '../../lib/temp.js'
import type { StoreKind, Target } from './types.js'

/** The shared Redis server of this machine, which the benchmark never uses. */
const SHARED_REDIS_PORT = 6379

let databases = 0
/** Databases made by this process and not dropped yet. */
const created = new Set<string>()

export async function withTarget<T>(store: StoreKind, fn: (target: Target) => Promise<T>): Promise<T> {
  switch (store) {
    case 'sqlite':
      return withTempDir('peers', (dir) => fn({ store, path: join(dir, 'bench.db') }))
    case 'postgres':
      return withDatabase((url) => fn({ store, url }))
    case 'redis':
      return withBenchRedis('peers-redis', async (server) => {
        await assertDurableRedis(server.url, server.port)
        return fn({ store, url: server.url, host: '127.0.0.1', port: server.port })
      })
  }
}

async function withDatabase<T>(fn: (url: string) => Promise<T>): Promise<T> {
  const name = `ferry_peers_${process.pid}_${++databases}`
  const admin = new pg.Client({ connectionString: BENCH_POSTGRES_URL })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
    created.add(name)
    const url = new URL(BENCH_POSTGRES_URL)
    url.pathname = `/${name}`
    try {
      return await fn(url.toString())
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      created.delete(name)
    }
  } finally {
    await admin.end()
  }
}

/** Drops what an interrupted run left (only the databases this process created). */
export async function dropLeftovers(): Promise<void> {
  if (created.size === 0) return
  const admin = new pg.Client({ connectionString: BENCH_POSTGRES_URL })
  await admin.connect()
  try {
    for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    created.clear()
  } finally {
    await admin.end()
  }
}

/** Refuses to measure on a Redis that is not the benchmark's own with AOF fsynced on every write. */
async function assertDurableRedis(url: string, port: number): Promise<void> {
  if (port === SHARED_REDIS_PORT) throw new Error(`refusing port ${port}: the shared Redis server's`)
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 })
  try {
    await redis.connect()
    const [, appendonly] = (await redis.config('GET', 'appendonly')) as [string, string]
    const [, appendfsync] = (await redis.config('GET', 'appendfsync')) as [string, string]
    if (appendonly !== 'yes' || appendfsync !== 'always')
      throw new Error(`the benchmark's redis-server has appendonly ${appendonly}, appendfsync ${appendfsync}`)
  } finally {
    redis.disconnect()
  }
}

/** Why a store cannot be measured here, or null. */
export async function unavailable(store: StoreKind): Promise<string | null> {
  if (store === 'sqlite') return null
  if (store === 'redis') {
    const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' })
    return probe.status === 0 ? null : 'no redis-server binary on the PATH'
  }
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL, connectionTimeoutMillis: 5000 })
  try {
    await client.connect()
    return null
  } catch (error) {
    return `PostgreSQL at ${new URL(BENCH_POSTGRES_URL).host} is not reachable: ${(error as Error).message}`
  } finally {
    await client.end().catch(() => {})
  }
}

/** The Store lines of the report: servers, versions and the settings that make a commit durable. */
export async function describeStore(store: StoreKind): Promise<string> {
  switch (store) {
    case 'sqlite':
      return 'sqlite: a fresh file per measurement in .bench-tmp/, WAL, synchronous=FULL for every product'
    case 'redis': {
      const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' })
      const version = /v=(\S+)/.exec(probe.stdout ?? '')?.[1] ?? 'version unknown'
      return `redis (redis-server ${version}): ${REDIS_BENCH_SETUP} (checked with CONFIG GET before each measurement), a fresh server per measurement on a free port`
    }
    case 'postgres': {
      const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL })
      await client.connect()
      try {
        const { rows } = await client.query<{ version: string; synchronous_commit: string; fsync: string }>(
          `SELECT current_setting('server_version') AS version,
                  current_setting('synchronous_commit') AS synchronous_commit, current_setting('fsync') AS fsync`,
        )
        const row = rows[0]!
        return `postgres (PostgreSQL ${row.version} at ${new URL(BENCH_POSTGRES_URL).host}): synchronous_commit=${row.synchronous_commit}, fsync=${row.fsync}, a fresh database per measurement`
      } finally {
        await client.end()
      }
    }
  }
}
