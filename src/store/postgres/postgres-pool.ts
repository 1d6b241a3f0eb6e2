/**
 * The PostgreSQL store's pooled connections and its statements (sql/*.sql, with the schema put in
 * once): one statement on one pooled connection per call, its driver errors turned into Ferry's.
 */
import pg from 'pg'

import { StoreClosedError } from '../../core/errors.js'
import { sql } from './generated/assets.js'
import { postgresError } from './postgres-errors.js'
import type { PostgresSchema } from './postgres-migrations.js'

// The client: pg 8.23.1, chosen over postgres 3.4.9 by measurement on this 2-core machine
// (PostgreSQL 15 on localhost, medians of two runs of a script timing each client):
//   claim-shaped round trip (unnest of 5 queues, LATERAL index scan, LIMIT 10), p50 of 3,000:
//     pg with a named (prepared) statement 0.13-0.15 ms, pg unnamed 0.23-0.33 ms, postgres 0.09-0.10 ms
//   one INSERT … SELECT FROM unnest(arrays) of 10,000 jobs of 520 bytes: pg 310-390 ms, postgres
//     310-345 ms (the server's work: the same with a JSON parameter, json_to_recordset)
//   NOTIFY from a pooled connection to a LISTEN callback, p50 of 300: pg 0.15-0.23 ms, postgres 0.14-0.16 ms
// postgres is ~0.05 ms faster per bare round trip; everything else is the server's and equal. The
// hot path batches (a settle with a claim carries many jobs), so 0.05 ms per round trip is far below the
// targets' margins, while pg is the client most applications already hold a transaction of (the
// `tx` of a transactional enqueue), gives the listening connection's life cycle to us explicitly,
// and is the one DESIGN.md names. Hot statements are named (prepared once per connection): that
// halves pg's round trip.

export type SqlName = keyof typeof sql

export class PostgresPool {
  /** Each statement of sql/, for this schema. */
  readonly texts: Record<SqlName, string>
  /** Set first by the store's close(): a statement that fails from then on says the store closed. */
  closed = false
  private readonly pool: pg.Pool

  constructor(
    config: pg.ClientConfig,
    poolSize: number,
    /** host:port, for the messages of connection errors. */
    readonly server: string,
    schemaFiles: PostgresSchema,
  ) {
    this.texts = Object.fromEntries(
      Object.entries(sql).map(([name, text]) => [name, schemaFiles.interpolate(text)]),
    ) as Record<SqlName, string>
    this.pool = new pg.Pool({ ...config, max: poolSize, idleTimeoutMillis: 30_000 })
    // An idle pooled connection that dies (server restart, pg_terminate_backend) is dropped by the
    // pool, which reports it here; the next query opens a fresh one. Without a listener the error
    // would crash the process.
    this.pool.on('error', () => {})
  }

  /**
   * Runs one statement on a pooled connection. `prepared` names it, so each connection parses and
   * plans it once (pg sends it unnamed otherwise, re-parsed every time).
   */
  async query<R>(text: string, values: unknown[], prepared?: SqlName): Promise<R[]> {
    try {
      const result = await this.pool.query(
        prepared === undefined ? { text, values } : { name: `ferry-${prepared}`, text, values },
      )
      return result.rows as R[]
    } catch (error) {
      if (this.closed) throw new StoreClosedError('query')
      throw postgresError(error, this.server)
    }
  }

  /** Runs `use` with a connection of its own (a transaction, the migrations' lock). */
  async withClient<R>(use: (client: pg.PoolClient) => Promise<R>): Promise<R> {
    let client: pg.PoolClient
    try {
      client = await this.pool.connect()
    } catch (error) {
      throw postgresError(error, this.server)
    }
    try {
      return await use(client)
    } catch (error) {
      throw postgresError(error, this.server)
    } finally {
      client.release()
    }
  }

  /**
   * Runs `use` in a transaction on a connection of its own: committed when it resolves, rolled back
   * when it throws. Its row locks hold up claims (a queue's row) or fires (a schedule's): a caller
   * that stalls mid-transaction (a frozen process) must not hold them for longer than 5 s, after
   * which the server ends its session.
   */
  async transaction<R>(use: (client: pg.PoolClient) => Promise<R>): Promise<R> {
    return this.withClient(async (client) => {
      try {
        await client.query("BEGIN; SET LOCAL idle_in_transaction_session_timeout = '5s'")
        const result = await use(client)
        await client.query('COMMIT')
        return result
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        throw error
      }
    })
  }

  async end(): Promise<void> {
    await this.pool.end().catch(() => {})
  }
}
