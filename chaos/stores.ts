/**
 * A fresh store for one chaos run, named by its URL: everything else in the chaos run only ever
 * sees the URL, so a store that openStore can open plugs in here with its server set-up alone.
 * - sqlite: a new database file in the run's directory
 * - postgres: a new database on the server of FERRY_TEST_POSTGRES_URL, dropped afterwards
 * - redis: a redis-server of its own on a free port, with AOF and appendfsync always, stopped afterwards
 */
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { join } from 'node:path'

export const STORE_KINDS = ['sqlite', 'postgres', 'redis'] as const
export type StoreKind = (typeof STORE_KINDS)[number]

export interface ChaosStore {
  url: string
  teardown(): Promise<void>
}

const DEFAULT_POSTGRES_URL = 'postgres://127.0.0.1:5432/postgres?user=postgres'

export async function setUpStore(kind: StoreKind, dir: string): Promise<ChaosStore> {
  switch (kind) {
    case 'sqlite':
      return { url: `sqlite://${join(dir, 'chaos.db')}`, teardown: async () => {} }
    case 'postgres':
      return setUpPostgres()
    case 'redis':
      return setUpRedis(dir)
  }
}

async function setUpPostgres(): Promise<ChaosStore> {
  const { default: pg } = await import('pg')
  const server = new URL(process.env.FERRY_TEST_POSTGRES_URL ?? DEFAULT_POSTGRES_URL)
  const database = `ferry_chaos_${process.pid}_${Date.now()}`
  const admin = new pg.Client({ connectionString: server.href })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${database}`)
  } finally {
    await admin.end()
  }
  const url = new URL(server.href)
  url.pathname = `/${database}`
  return {
    url: url.href,
    async teardown() {
      const client = new pg.Client({ connectionString: server.href })
      await client.connect()
      try {
        await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
      } finally {
        await client.end()
      }
    },
  }
}

async function setUpRedis(dir: string): Promise<ChaosStore> {
  const port = await freePort()
  const server = spawn(
    'redis-server',
    [
      ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''],
      ...['--appendonly', 'yes', '--appendfsync', 'always', '--maxmemory-policy', 'noeviction'],
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const exited = new Promise<void>((resolve) => server.on('exit', () => resolve()))
  await new Promise<void>((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000)
    server.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    server.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer)
        resolve()
      }
    })
  })
  server.stdout!.resume()
  server.stderr!.resume()
  return {
    url: `redis://127.0.0.1:${port}`,
    async teardown() {
      server.kill('SIGTERM')
      await exited
    },
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no port')),
      )
    })
  })
}
