import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { Redis } from 'ioredis'

export interface OwnRedisServer {
  readonly port: number
  readonly url: string
  readonly dir: string
  /** Starts it again on the same port and directory (after stop or kill), and waits for PING. */
  start(): Promise<void>
  /** SIGKILL: no shutdown, no final write. Resolves once the process is gone. */
  kill(): Promise<void>
  /** Stops it for good (SIGKILL; nothing to keep once done). */
  close(): Promise<void>
}

export interface RedisServerOptions {
  /** Its working directory: the append-only file goes here. */
  dir: string
  appendfsync?: 'always' | 'everysec' | 'no'
  appendonly?: boolean
  /** More environment for the server (a preloaded library: tests/support/fake-clock.ts). */
  env?: Record<string, string>
}

/**
 * Starts a redis-server of our own (the `redis-server` binary) on a free port, working in `dir`,
 * with AOF and appendfsync always unless asked otherwise, and no RDB snapshots. The tests'
 * durability and restart cases and the Redis benchmarks use it; the shared server is never
 * restarted or reconfigured.
 */
export async function startRedisServer(options: RedisServerOptions): Promise<OwnRedisServer> {
  const { dir } = options
  const port = await freePort()
  const args = serverArgs(port, dir, {
    appendonly: options.appendonly === false ? 'no' : 'yes',
    appendfsync: options.appendfsync ?? 'always',
    logfile: join(dir, 'redis.log'),
  })
  let child: ChildProcess | null = null
  const url = `redis://127.0.0.1:${port}`
  const server: OwnRedisServer = {
    port,
    url,
    dir,
    async start() {
      child = spawnServer(args, options.env)
      await untilAnswers(url, () => true)
    },
    async kill() {
      if (child !== null) await stopServer(child)
    },
    async close() {
      await server.kill()
    },
  }
  await server.start()
  return server
}

/** The command line of a redis-server of ours: on localhost only, working in `dir`, no RDB snapshots. */
function serverArgs(port: number, dir: string, settings: Record<string, string>): string[] {
  const all = { port: String(port), bind: '127.0.0.1', dir, save: '', ...settings }
  return Object.entries(all).flatMap(([name, value]) => [`--${name}`, value])
}

const live = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of live) killServer(child)
})

/**
 * A redis-server of ours. It stays in this process's session (and so its scheduling group), as the
 * benchmarks have always run it.
 */
function spawnServer(args: readonly string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn('redis-server', args, { stdio: 'ignore', env: { ...process.env, ...env } })
  live.add(child)
  return child
}

/** Kills a server (killServer) and resolves once it has exited. */
async function stopServer(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })
  killServer(child)
  await exited
  live.delete(child)
}

/**
 * SIGKILLs a server and the children it forked: the one that rewrites the AOF (on by default once
 * the file passes 64 MB, as in redis-throughput) otherwise goes on writing into the server's
 * directory after the server is gone, and the directory's removal fails. Stopped first, the server
 * cannot fork again between the listing of its children and its end.
 */
function killServer(child: ChildProcess): void {
  const { pid } = child
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  try {
    process.kill(pid, 'SIGSTOP')
  } catch {
    return // gone already
  }
  for (const forked of childrenOf(pid)) {
    try {
      process.kill(forked, 'SIGKILL')
    } catch {
      // ended meanwhile
    }
  }
  child.kill('SIGKILL')
}

/** The processes `pid` forked (Linux: /proc/<pid>/task/<pid>/children; none found elsewhere). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number)
  } catch {
    return []
  }
}

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

export interface OwnRedisCluster {
  /** A seed node's URL; the cluster client finds the others from it. */
  readonly url: string
  readonly ports: readonly number[]
  /** SIGKILLs the node on `port` (a failover test); close() still stops the others. */
  kill(port: number): Promise<void>
  /** Stops every node for good. */
  close(): Promise<void>
}

/**
 * Starts a Redis Cluster of our own: `masters` redis-server processes in cluster mode on free
 * ports, working in `dir`, with `replicas` replicas per master, joined with `redis-cli --cluster
 * create`, and waits until every node reports cluster_state:ok and every replica is in sync with
 * its master. A master that stops answering
 * for `nodeTimeoutMs` is failed over to its replica. No persistence: it is for behaviour, not
 * durability.
 */
export async function startRedisCluster({
  dir,
  masters = 3,
  replicas = 0,
  nodeTimeoutMs = 15_000,
}: {
  dir: string
  masters?: number
  replicas?: number
  nodeTimeoutMs?: number
}): Promise<OwnRedisCluster> {
  const ports: number[] = []
  for (let i = 0; i < masters * (1 + replicas); i++) ports.push(await freePort())
  const children = new Map(
    ports.map((port) => {
      const args = serverArgs(port, dir, {
        appendonly: 'no',
        'cluster-enabled': 'yes',
        'cluster-config-file': `nodes-${port}.conf`,
        'cluster-node-timeout': String(nodeTimeoutMs),
        logfile: join(dir, `redis-${port}.log`),
      })
      return [port, spawnServer(args)]
    }),
  )
  const close = async (): Promise<void> => {
    await Promise.all([...children.values()].map(stopServer))
  }
  try {
    for (const port of ports) await untilAnswers(`redis://127.0.0.1:${port}`, () => true)
    const create = spawnSync(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ],
      { encoding: 'utf8' },
    )
    if (create.status !== 0)
      throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`)
    // Ready: every node sees the whole cluster, and every replica is in sync with its master (a
    // replica that never synced cannot take over when its master fails).
    for (const port of ports) {
      await untilAnswers(`redis://127.0.0.1:${port}`, async (redis) => {
        if (!String(await redis.call('CLUSTER', 'INFO')).includes('cluster_state:ok')) return false
        const replication = await redis.info('replication')
        return !replication.includes('role:slave') || replication.includes('master_link_status:up')
      })
    }
  } catch (error) {
    await close()
    throw error
  }
  return {
    url: `redis://127.0.0.1:${ports[0]}`,
    ports,
    async kill(port) {
      const child = children.get(port)
      if (child === undefined) throw new Error(`no node of this cluster listens on ${port}`)
      await stopServer(child)
    },
    close,
  }
}

/** Runs `fn` on a connection of its own to `url` that never reconnects, then closes it. */
export async function withConnection<T>(url: string, fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(url, { lazyConnect: true, retryStrategy: () => null, disconnectTimeout: 10 })
  redis.on('error', () => {})
  try {
    await redis.connect()
    return await fn(redis)
  } finally {
    redis.disconnect()
  }
}

/** Waits (10 s at most) until the server at `url` answers and `ready` says yes. */
async function untilAnswers(url: string, ready: (redis: Redis) => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000
  for (;;) {
    try {
      const answered = await withConnection(url, async (redis) => {
        await redis.ping()
        return ready(redis)
      })
      if (answered) return
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`redis-server at ${url} did not get ready`, { cause: error })
    }
    if (Date.now() > deadline) throw new Error(`redis-server at ${url} did not get ready`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
