/**
 * Redis for tests: the server in FERRY_TEST_REDIS_URL (default redis://127.0.0.1:6379), shared by
 * every test file and every other user of it. Isolation is by namespace: each harness gets a
 * namespace of its own and deletes its keys (SCAN MATCH + UNLINK) when it closes. Never FLUSHDB.
 *
 * When the server is unreachable, tests/support/services.ts says what happens: skipped with the
 * reason, or a failure under CI.
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'

import {
  startRedisCluster,
  startRedisServer,
  type OwnRedisCluster,
  type OwnRedisServer,
} from './redis-server.js'
import { RedisStore, type RedisStoreOptions } from '../../src/redis.js'
import type { Store } from '../../src/store/store.js'
import { skipUnlessAvailable } from './services.js'
import type { CreateHarness, StoreHarness } from './store-harness.js'
import { defer } from './cleanup.js'

export type { OwnRedisCluster, OwnRedisServer }

export const TEST_REDIS_URL = process.env.FERRY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/**
 * The version of the ioredis that `import 'ioredis'` loads in this process: the `ioredis` dev
 * dependency (6), or the `ioredis5` alias once tests/support/use-ioredis5.mjs redirects it. Read
 * from the package.json above the module the import resolves to, so it names what really runs.
 */
export function ioredisVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.resolve('ioredis')))
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir)
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version
}

let reachable: Promise<string | null> | null = null

/** Null when the test server answers PING, else why not. */
export function redisUnreachableReason(): Promise<string | null> {
  reachable ??= (async () => {
    const redis = new Redis(TEST_REDIS_URL, {
      lazyConnect: true,
      retryStrategy: () => null,
      connectTimeout: 2000,
    })
    redis.on('error', () => {})
    try {
      await redis.connect()
      await redis.ping()
      return null
    } catch (error) {
      return `Redis at ${TEST_REDIS_URL} is unreachable (${error instanceof Error ? error.message : String(error)})`
    } finally {
      redis.disconnect()
    }
  })()
  return reachable
}

/** A namespace no other test run uses: tag, process id and random bits. */
export function uniqueNamespace(tag: string): string {
  return `test-${tag}-${process.pid}-${randomBytes(4).toString('hex')}`
}

/** Deletes every key of the namespace (only those). */
export async function dropNamespace(namespace: string, url = TEST_REDIS_URL): Promise<void> {
  const redis = new Redis(url, { disconnectTimeout: 10 })
  redis.on('error', () => {})
  try {
    const pattern = `ferry:{${namespace}}:*`
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
      cursor = next
      if (keys.length > 0) await redis.unlink(...keys)
    } while (cursor !== '0')
  } finally {
    redis.disconnect()
  }
}

export function openTestStore(namespace: string, options: RedisStoreOptions = {}): Promise<RedisStore> {
  return RedisStore.open({ url: TEST_REDIS_URL, namespace, onWarning: () => {}, ...options })
}

/**
 * A store on a namespace of its own on the test server, both gone when the test ends: Redis's
 * tempDatabase (sqlite-harness.ts) and tempSchema (postgres-harness.ts).
 */
export async function tempNamespace(
  t: TestContext,
  tag: string,
  options: RedisStoreOptions = {},
): Promise<{ store: RedisStore; namespace: string }> {
  const namespace = uniqueNamespace(tag)
  defer(t, () => dropNamespace(namespace))
  const store = await openTestStore(namespace, options)
  defer(t, () => store.close())
  return { store, namespace }
}

/** Where a harness's stores live: the shared test server, or a cluster of the test file's own. */
export interface RedisTarget {
  url: string
  /** A Redis Cluster of the file's own (startRedisCluster): it goes whole when the file ends. */
  cluster?: boolean
}

/** A fresh namespace per harness; peers open the same namespace as another process would. */
export function redisHarness(tag: string, target: RedisTarget = { url: TEST_REDIS_URL }): CreateHarness {
  const { url, cluster = false } = target
  return async (): Promise<StoreHarness> => {
    const namespace = uniqueNamespace(tag)
    const opened: Store[] = []
    const open = (): Promise<RedisStore> => openTestStore(namespace, { url, cluster })
    const cleanUp = async (): Promise<void> => {
      const closing = await Promise.allSettled(opened.map((s) => s.close()))
      if (!cluster) await dropNamespace(namespace, url)
      const failed = closing.find((r) => r.status === 'rejected')
      if (failed) throw failed.reason
    }
    try {
      const store = await open()
      opened.push(store)
      const storeUrl = new URL(url)
      storeUrl.searchParams.set('namespace', namespace)
      if (cluster) storeUrl.searchParams.set('cluster', 'true')
      return {
        store,
        async openPeer() {
          const peer = await open()
          opened.push(peer)
          return peer
        },
        close: cleanUp,
        url: storeUrl.toString(),
      }
    } catch (error) {
      await cleanUp().catch(() => {})
      throw error
    }
  }
}

/** Null when the `redis-server` binary runs here (a test can start a server of its own), else why not. */
export function redisServerMissingReason(): string | null {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' })
  if (probe.status === 0) return null
  return `the redis-server binary is not available (${probe.error?.message ?? probe.stderr})`
}

/** Options for a test that starts a redis-server of its own (tests/support/services.ts). */
export function ownServerOptions(): { skip?: string } {
  return skipUnlessAvailable(redisServerMissingReason())
}

/**
 * A redis-server of the test's own (tests/support/redis-server.ts) in a temp directory, with AOF and
 * appendfsync always unless asked otherwise; `close()` stops it and removes the directory.
 */
export function startOwnRedisServer(
  options: {
    appendfsync?: 'always' | 'everysec' | 'no'
    appendonly?: boolean
    env?: Record<string, string>
  } = {},
): Promise<OwnRedisServer> {
  return inTempDir('ferry-redis-', (dir) => startRedisServer({ ...options, dir }))
}

/**
 * A Redis Cluster of the test's own (tests/support/redis-server.ts startRedisCluster) in a temp
 * directory; `close()` stops every node and removes the directory.
 */
export function startOwnRedisCluster(
  options: Omit<Parameters<typeof startRedisCluster>[0], 'dir'> = {},
): Promise<OwnRedisCluster> {
  return inTempDir('ferry-redis-cluster-', (dir) => startRedisCluster({ ...options, dir }))
}

/** Starts servers working in a new temp directory, which goes when they close or fail to start. */
async function inTempDir<T extends { close(): Promise<void> }>(
  prefix: string,
  start: (dir: string) => Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const removeDir = (): void => rmSync(dir, { recursive: true, force: true })
  let servers: T
  try {
    servers = await start(dir)
  } catch (error) {
    removeDir()
    throw error
  }
  return {
    ...servers,
    async close() {
      await servers.close()
      removeDir()
    },
  }
}
