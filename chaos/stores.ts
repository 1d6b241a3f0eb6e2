/**
 * A fresh store for one chaos run, named by its URL: everything else in the chaos run only ever
 * sees the URL, so a store that openStore can open plugs in here with its server set-up alone.
 * - sqlite: a new database file in the run's directory
 * - postgres: a new database on the server of FERRY_TEST_POSTGRES_URL, dropped afterwards
 * - redis: a redis-server of its own on a free port, with AOF and appendfsync always, stopped afterwards
 *   (tests/support/redis-server.ts, as the tests and benchmarks start theirs)
 */
import { join } from 'node:path'

import { startRedisServer } from '../tests/support/redis-server.js'

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
  const server = await startRedisServer({ dir })
  return { url: server.url, teardown: () => server.close() }
}
