import { spawn, type ChildProcess } from 'node:child_process'
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
