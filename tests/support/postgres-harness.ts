/**
 * PostgreSQL for tests: the server named by FERRY_TEST_POSTGRES_URL (default: the local one), and a
 * schema of its own, with a random name, for every harness. A schema is created by the store's own
 * migration and dropped when the harness closes; nothing else on the server is touched.
 *
 * When the server cannot be reached, tests/support/services.ts says what happens: skipped with the
 * reason, or a failure under CI.
 */
import { randomBytes } from 'node:crypto'
import type { TestContext } from 'node:test'
import pg from 'pg'

import { PostgresStore, type PostgresStoreOptions } from '../../src/postgres.js'
import type { Store } from '../../src/store/store.js'
import type { CreateHarness } from './store-harness.js'
import { defer } from './cleanup.js'

export const POSTGRES_URL = process.env.FERRY_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** A fresh schema name that no other test uses. */
export function testSchemaName(): string {
  return `ferry_test_${randomBytes(6).toString('hex')}`
}

/** The store URL of a schema on the test server, as `ferry --store` takes it. */
export function storeUrl(schema: string): string {
  const url = new URL(POSTGRES_URL)
  url.searchParams.set('schema', schema)
  return url.toString()
}

/** Runs one statement on a connection of its own (setup and teardown only). */
export async function adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  try {
    return (await client.query<R>(text, values)).rows
  } finally {
    await client.end()
  }
}

export async function dropSchema(schema: string): Promise<void> {
  await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
}

let reachable: Promise<string | null> | null = null

/** Null when the test server answers, else why not (for tests/support/services.ts). */
export function postgresUnreachableReason(): Promise<string | null> {
  reachable ??= adminQuery('SELECT 1').then(
    () => null,
    (error: unknown) =>
      `PostgreSQL is not reachable at ${redact(POSTGRES_URL)} (${(error as Error).message}); set FERRY_TEST_POSTGRES_URL`,
  )
  return reachable
}

export interface PostgresHarnesses {
  /**
   * One store harness per call, on the file's schema emptied of every job, stop request, queue
   * setting and schedule (the schedules version with the stop request: both are control rows), and
   * of the queues' start logs and group turns (what rates and fairness remember).
   */
  createHarness: CreateHarness
  /** Drops the file's schema: call it from the test file's after(). */
  dropSchema(): Promise<void>
}

/**
 * Harnesses for one test file. The file gets one schema, migrated by its first store; each harness
 * then starts from that schema emptied (a few DELETEs), which costs a few ms where migrating a new
 * schema per test cost ~150 ms and dropping it ~110 ms. Ids keep growing from one test to the next,
 * which the contract allows (ids only have to increase).
 */
export function postgresHarnesses(): PostgresHarnesses {
  const schema = testSchemaName()
  let migrated = false
  const createHarness: CreateHarness = async () => {
    if (migrated) {
      await adminQuery(
        `DELETE FROM "${schema}".jobs; DELETE FROM "${schema}".control; DELETE FROM "${schema}".queues; ` +
          `DELETE FROM "${schema}".starts; DELETE FROM "${schema}".group_turns; DELETE FROM "${schema}".schedules; ` +
          `DELETE FROM "${schema}".workers; DELETE FROM "${schema}".throughput`,
      )
    }
    migrated = true
    const opened: Store[] = []
    const open = async (): Promise<Store> => {
      const store = await PostgresStore.open({ connectionString: POSTGRES_URL, schema, poolSize: 4 })
      opened.push(store)
      return store
    }
    const close = async (): Promise<void> => {
      // Close every instance, even when one fails; closing one the test already closed is harmless.
      const closing = await Promise.allSettled(opened.map((s) => s.close()))
      const failed = closing.find((r) => r.status === 'rejected')
      if (failed) throw failed.reason
    }
    try {
      return { store: await open(), openPeer: open, close, url: storeUrl(schema) }
    } catch (error) {
      await close().catch(() => {})
      throw error
    }
  }
  return { createHarness, dropSchema: () => dropSchema(schema) }
}

export interface TempSchema {
  schema: string
  /** The --store URL of the schema. */
  url: string
  /** Opens a store on the schema; every store opened here is closed after the test. */
  open(options?: Partial<PostgresStoreOptions>): Promise<PostgresStore>
}

/** A schema of its own for one test, dropped (after its stores are closed) when the test ends. */
export function tempSchema(t: TestContext): TempSchema {
  const schema = testSchemaName()
  // Deferred first, so it runs last: after the stores and processes the test opened are closed.
  defer(t, () => dropSchema(schema))
  return {
    schema,
    url: storeUrl(schema),
    async open(options = {}) {
      const store = await PostgresStore.open({ connectionString: POSTGRES_URL, schema, ...options })
      defer(t, () => store.close())
      return store
    },
  }
}

function redact(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@')
}
