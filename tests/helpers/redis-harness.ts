/**
 * Redis for tests: the server in FERRY_TEST_REDIS_URL (default redis://127.0.0.1:6379), shared by
 * every test file and every other user of it. Isolation is by namespace: each harness gets a
 * namespace of its own and deletes its keys (SCAN MATCH + UNLINK) when it closes. Never FLUSHDB.
 *
 * When the server is unreachable, tests fail if CI is 'true' and are skipped visibly otherwise.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it } from 'node:test'
import { Redis } from 'ioredis'

import { RedisStore, type RedisStoreOptions } from '../../src/redis.js'
import type { Store } from '../../src/store/store.js'
import type { CreateHarness, StoreHarness } from './store-harness.js'

export const TEST_REDIS_URL = process.env.FERRY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

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

/**
 * Runs `define` (which declares the file's tests) when Redis is reachable. Otherwise declares one
 * test that fails under CI=true and is skipped, with the reason, elsewhere.
 */
export async function whenRedisReachable(define: () => void): Promise<void> {
  const reason = await redisUnreachableReason()
  if (reason === null) {
    define()
    return
  }
  if (process.env.CI === 'true') {
    it('needs Redis (CI=true: an unreachable Redis fails the run)', () => {
      throw new Error(reason)
    })
  } else {
    it('needs Redis', { skip: reason }, () => {})
  }
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

/** A fresh namespace per harness; peers open the same namespace as another process would. */
export function redisHarness(tag: string): CreateHarness {
  return async (): Promise<StoreHarness> => {
    const namespace = uniqueNamespace(tag)
    const opened: Store[] = []
    const cleanUp = async (): Promise<void> => {
      const closing = await Promise.allSettled(opened.map((s) => s.close()))
      await dropNamespace(namespace)
      const failed = closing.find((r) => r.status === 'rejected')
      if (failed) throw failed.reason
    }
    try {
      const store = await openTestStore(namespace)
      opened.push(store)
      return {
        store,
        async openPeer() {
          const peer = await openTestStore(namespace)
          opened.push(peer)
          return peer
        },
        close: cleanUp,
      }
    } catch (error) {
      await cleanUp().catch(() => {})
      throw error
    }
  }
}

export interface OwnRedisServer {
  readonly port: number
  readonly url: string
  readonly dir: string
  /** Starts it again on the same port and directory (after stop or kill), and waits for PING. */
  start(): Promise<void>
  /** SIGKILL: no shutdown, no final write. Resolves once the process is gone. */
  kill(): Promise<void>
  /** Stops it for good and removes its directory. */
  close(): Promise<void>
}

/**
 * A redis-server of the test's own (the `redis-server` binary), on a free port and a temp
 * directory, with AOF and appendfsync always unless asked otherwise, and no RDB snapshots.
 */
export async function startOwnRedisServer(
  options: { appendfsync?: 'always' | 'everysec' | 'no'; appendonly?: boolean } = {},
): Promise<OwnRedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-redis-'))
  const port = await freePort()
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    options.appendonly === false ? 'no' : 'yes',
    '--appendfsync',
    options.appendfsync ?? 'always',
    '--logfile',
    join(dir, 'redis.log'),
  ]
  let child: ChildProcess | null = null
  const url = `redis://127.0.0.1:${port}`
  const exited = (): Promise<void> =>
    new Promise((resolve) => {
      if (child === null || child.exitCode !== null || child.signalCode !== null) resolve()
      else child.once('exit', () => resolve())
    })
  const server: OwnRedisServer = {
    port,
    url,
    dir,
    async start() {
      child = spawn('redis-server', args, { stdio: 'ignore' })
      live.add(child)
      const deadline = Date.now() + 10_000
      for (;;) {
        const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, disconnectTimeout: 10 })
        probe.on('error', () => {})
        try {
          await probe.connect()
          await probe.ping()
          return
        } catch (error) {
          if (Date.now() > deadline)
            throw new Error(`redis-server on port ${port} did not start`, { cause: error })
          await new Promise((resolve) => setTimeout(resolve, 20))
        } finally {
          probe.disconnect()
        }
      }
    },
    async kill() {
      const gone = exited()
      child?.kill('SIGKILL')
      await gone
      if (child !== null) live.delete(child)
    },
    async close() {
      await server.kill()
      rmSync(dir, { recursive: true, force: true })
    },
  }
  await server.start()
  return server
}

const live = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL')
})

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })
}
