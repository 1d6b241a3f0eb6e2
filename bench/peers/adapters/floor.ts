/**
 * The floor: the least a durable queue has to do on each store, written straight against the
 * driver, so every product's figure can be read as a fraction of it.
 *
 * - SQLite (better-sqlite3, the build Ferry uses): WAL, synchronous=FULL; a table shaped like a
 *   job row with an index on (state, run_at, id). An enqueue is one INSERT in its own commit; the
 *   bulk path one transaction of INSERTs; a worker claims up to `concurrency` ready rows in one
 *   UPDATE … RETURNING (a commit), runs them, and marks them done in one UPDATE (a commit).
 * - PostgreSQL (pg, a pool of 10 like the peers' defaults): the same table; an enqueue is one
 *   INSERT (synchronous_commit on); the bulk path one INSERT … SELECT FROM unnest; the claim an
 *   UPDATE of rows picked FOR UPDATE SKIP LOCKED.
 * - Redis (ioredis, the benchmark's own AOF-always server): an enqueue is one LPUSH; the bulk
 *   path one MULTI of LPUSHes; the claim a script that pops up to `concurrency` jobs and adds
 *   them to a set of running ones, the settlement a MULTI of SREM and INCRBY.
 *
 * Nothing else: no retries, leases, events, or payload checks. Concurrent enqueues are the
 * driver's own: on SQLite each is its own commit, one after the other; on PostgreSQL they share
 * the pool; on Redis they are in flight on one connection.
 */
import type Database from 'better-sqlite3'
import type { Redis } from 'ioredis'
import type pg from 'pg'
import { JOB_NAME, type Adapter, type Producer, type Target } from '../lib/types.js'
import { perStore, producerOf, storePath, storeUrl } from './shared.js'

/** What the floor needs of a store. */
interface FloorStore {
  insertOne(payload: string): Promise<void>
  insertMany(payloads: string[]): Promise<void>
  /** Marks up to `limit` ready jobs running and returns their payloads (and ids). */
  claim(limit: number): Promise<{ ids: (string | number)[]; payloads: string[] }>
  settle(ids: (string | number)[]): Promise<void>
  close(): Promise<void>
}

const SQLITE_SCHEMA = `
  CREATE TABLE IF NOT EXISTS floor_jobs (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    payload TEXT NOT NULL,
    state INTEGER NOT NULL DEFAULT 0,
    run_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS floor_jobs_ready ON floor_jobs (state, run_at, id);`

const POSTGRES_SCHEMA = `
  CREATE TABLE IF NOT EXISTS floor_jobs (
    id bigserial PRIMARY KEY,
    name text NOT NULL,
    payload jsonb NOT NULL,
    state smallint NOT NULL DEFAULT 0,
    run_at timestamptz NOT NULL DEFAULT now(),
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX IF NOT EXISTS floor_jobs_ready ON floor_jobs (state, run_at, id);`

const REDIS_KEYS = ['floor:ready', 'floor:running', 'floor:done'] as const
const REDIS_CLAIM = `
  local jobs = redis.call('RPOP', KEYS[1], ARGV[1])
  if jobs then redis.call('SADD', KEYS[2], unpack(jobs)) end
  return jobs`

function sqliteFloor(db: Database.Database, migrate: boolean): FloorStore {
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.pragma('busy_timeout = 5000')
  if (migrate) db.exec(SQLITE_SCHEMA)
  const insert = db.prepare('INSERT INTO floor_jobs (name, payload, run_at, created_at) VALUES (?, ?, ?, ?)')
  const insertMany = db.transaction((payloads: string[]) => {
    const now = Date.now()
    for (const payload of payloads) insert.run(JOB_NAME, payload, now, now)
  })
  const claim = db.prepare<[number, number], { id: number; payload: string }>(
    `UPDATE floor_jobs SET state = 1 WHERE id IN (
       SELECT id FROM floor_jobs WHERE state = 0 AND run_at <= ? ORDER BY run_at, id LIMIT ?
     ) RETURNING id, payload`,
  )
  const settle = db.prepare('UPDATE floor_jobs SET state = 2 WHERE id IN (SELECT value FROM json_each(?))')
  return {
    async insertOne(payload) {
      const now = Date.now()
      insert.run(JOB_NAME, payload, now, now)
    },
    async insertMany(payloads) {
      insertMany(payloads)
    },
    async claim(limit) {
      const rows = claim.all(Date.now(), limit)
      return { ids: rows.map((row) => row.id), payloads: rows.map((row) => row.payload) }
    },
    async settle(ids) {
      settle.run(JSON.stringify(ids))
    },
    async close() {
      db.close()
    },
  }
}

async function postgresFloor(pool: pg.Pool, migrate: boolean): Promise<FloorStore> {
  if (migrate) await pool.query(POSTGRES_SCHEMA)
  return {
    async insertOne(payload) {
      await pool.query('INSERT INTO floor_jobs (name, payload) VALUES ($1, $2)', [JOB_NAME, payload])
    },
    async insertMany(payloads) {
      await pool.query('INSERT INTO floor_jobs (name, payload) SELECT $1, p FROM unnest($2::jsonb[]) AS p', [
        JOB_NAME,
        payloads,
      ])
    },
    async claim(limit) {
      const { rows } = await pool.query<{ id: string; payload: unknown }>(
        `UPDATE floor_jobs SET state = 1 WHERE id IN (
           SELECT id FROM floor_jobs WHERE state = 0 AND run_at <= now() ORDER BY run_at, id
           LIMIT $1 FOR UPDATE SKIP LOCKED
         ) RETURNING id, payload::text AS payload`,
        [limit],
      )
      return { ids: rows.map((row) => row.id), payloads: rows.map((row) => row.payload as string) }
    },
    async settle(ids) {
      await pool.query('UPDATE floor_jobs SET state = 2 WHERE id = ANY($1::bigint[])', [ids])
    },
    async close() {
      await pool.end()
    },
  }
}

function redisFloor(redis: Redis): FloorStore {
  const [ready, running, done] = REDIS_KEYS
  return {
    async insertOne(payload) {
      await redis.lpush(ready, payload)
    },
    async insertMany(payloads) {
      const multi = redis.multi()
      for (const payload of payloads) multi.lpush(ready, payload)
      await multi.exec()
    },
    async claim(limit) {
      const jobs = (await redis.eval(REDIS_CLAIM, 2, ready, running, limit)) as string[] | null
      const payloads = jobs ?? []
      return { ids: payloads, payloads }
    },
    async settle(ids) {
      await redis
        .multi()
        .srem(running, ...(ids as string[]))
        .incrby(done, ids.length)
        .exec()
    },
    async close() {
      await redis.quit()
    },
  }
}

/** Opens the floor's store on a target; `migrate` creates its table first (Redis needs none). */
type Opener = (target: Target, migrate: boolean) => Promise<FloorStore>

/** Each store's driver, loaded before any clock starts (Adapter.load). */
const openers = perStore<Opener>({
  async sqlite() {
    const { default: Database } = await import('better-sqlite3')
    return async (target, migrate) => sqliteFloor(new Database(storePath(target)), migrate)
  },
  async postgres() {
    const { default: pg } = await import('pg')
    return (target, migrate) =>
      postgresFloor(new pg.Pool({ connectionString: storeUrl(target), max: 10 }), migrate)
  },
  async redis() {
    const { Redis } = await import('ioredis')
    return async (target) => redisFloor(new Redis(storeUrl(target)))
  },
})

function openFloor(target: Target, migrate = false): Promise<FloorStore> {
  return openers.get()(target, migrate)
}

/** How long the floor's worker sleeps when it found no job. */
const EMPTY_POLL_MS = 10

export const adapter: Adapter = {
  product: 'floor',
  completion: 'durable',

  load: openers.load,

  async migrate(target) {
    const floor = await openFloor(target, true)
    await floor.close()
  },

  async producer(target): Promise<Producer> {
    const floor = await openFloor(target)
    return producerOf({
      one: (payload) => floor.insertOne(JSON.stringify(payload)),
      many: (payloads) => floor.insertMany(payloads.map((payload) => JSON.stringify(payload))),
      close: () => floor.close(),
    })
  },

  async startWorker(target, { concurrency, hooks }) {
    const floor = await openFloor(target)
    const handler = async (_payload: unknown): Promise<void> => {
      hooks.onStart()
    }
    let running = true
    const loop = (async () => {
      while (running) {
        const { ids, payloads } = await floor.claim(concurrency)
        if (ids.length === 0) {
          await new Promise((resolve) => setTimeout(resolve, EMPTY_POLL_MS))
          continue
        }
        await Promise.all(payloads.map((payload) => handler(JSON.parse(payload))))
        await floor.settle(ids)
        for (let i = 0; i < ids.length; i++) hooks.onCompleted()
      }
    })()
    return {
      async stop() {
        running = false
        await loop
        await floor.close()
      },
    }
  },
}
