import { spawn, spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { createClient, type Client } from '../../src/client/client.js'
import { RedisStore } from '../../src/redis.js'
import { startRedisServer, type OwnRedisServer } from './redis-server.js'
import { REPO_ROOT, withTempDir } from './temp.js'

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

/** `ferry work` prints this on stderr once worker.start() has resolved. */
const READY_LINE = /^ferry: worker \S+ on /m

export interface RedisChildWorker {
  onLine(listener: (line: string) => void): void
  assertAlive(): void
}

/**
 * Runs fn with an idle `ferry work` child process (bench/fixtures/handlers.ts, from source through
 * tsx, as bench/lib/child-worker.ts does for SQLite) on the store URL, stopping it however fn ends.
 */
export async function withRedisChildWorker<T>(
  storeUrl: string,
  timeLimitS: number,
  fn: (child: RedisChildWorker) => Promise<T>,
): Promise<T> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(REPO_ROOT, 'src', 'cli', 'main.ts'),
      '--store',
      storeUrl,
      'work',
      '--handlers',
      join(REPO_ROOT, 'bench', 'fixtures', 'handlers.ts'),
      '--time-limit',
      `${timeLimitS}s`,
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const kill = (): void => void child.kill('SIGKILL')
  process.once('exit', kill)
  let stderr = ''
  child.stderr!.setEncoding('utf8')
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const describeExit = (): string => `the child worker exited (code ${child.exitCode}); stderr:\n${stderr}`
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the child worker did not start; stderr:\n${stderr}`)),
        60_000,
      )
      child.stderr!.on('data', (chunk: string) => {
        stderr += chunk
        if (READY_LINE.test(stderr)) {
          clearTimeout(timer)
          resolve()
        }
      })
      child.once('exit', () => {
        clearTimeout(timer)
        reject(new Error(describeExit()))
      })
    })
    const lines = createInterface({ input: child.stdout!, crlfDelay: Infinity })
    return await fn({
      onLine: (listener) => lines.on('line', listener),
      assertAlive: () => {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(describeExit())
      },
    })
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      const timer = setTimeout(kill, 5000)
      await exited
      clearTimeout(timer)
    }
    process.off('exit', kill)
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
