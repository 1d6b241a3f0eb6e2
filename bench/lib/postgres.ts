import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import pg from 'pg'
import { createClient, type Client } from '../../src/client/client.js'
import { PostgresStore } from '../../src/postgres.js'

/** The server the PostgreSQL scenarios use: FERRY_BENCH_POSTGRES_URL, else the tests' one. */
export const BENCH_POSTGRES_URL =
  process.env.FERRY_BENCH_POSTGRES_URL ??
  process.env.FERRY_TEST_POSTGRES_URL ??
  'postgres://postgres@127.0.0.1:5432/test'

export interface BenchSchema {
  schema: string
  /** The --store URL of the schema. */
  url: string
  /** A store on the schema (closed by withBenchSchema); `options` are PostgreSQL session settings. */
  open(settings?: { options?: string }): Promise<PostgresStore>
  /** A client on a store of its own (closed by withBenchSchema). */
  client(): Promise<Client>
  /** Runs SQL on a connection of its own: setup, EXPLAIN. */
  admin<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>
}

/**
 * A schema of its own for one measurement, with a random name, migrated by the first store that
 * opens it and dropped afterwards (whatever happens), with every store opened on it closed first.
 */
export async function withBenchSchema<T>(fn: (bench: BenchSchema) => Promise<T>): Promise<T> {
  const schema = `ferry_bench_${randomBytes(5).toString('hex')}`
  const url = new URL(BENCH_POSTGRES_URL)
  url.searchParams.set('schema', schema)
  const stores: PostgresStore[] = []
  const clients: Client[] = []
  const adminClient = new pg.Client({ connectionString: BENCH_POSTGRES_URL })
  await adminClient.connect()
  const open = async ({ options }: { options?: string } = {}): Promise<PostgresStore> => {
    const connection = new URL(BENCH_POSTGRES_URL)
    if (options !== undefined) connection.searchParams.set('options', options)
    const store = await PostgresStore.open({ connectionString: connection.toString(), schema })
    stores.push(store)
    return store
  }
  try {
    return await fn({
      schema,
      url: url.toString(),
      open,
      async client() {
        const client = createClient({ store: await open() })
        clients.push(client)
        return client
      },
      async admin<R extends pg.QueryResultRow>(text: string, values: unknown[] = []) {
        return (await adminClient.query<R>(text, values)).rows
      },
    })
  } finally {
    for (const client of clients) await client.close()
    for (const store of stores) await store.close()
    await adminClient.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await adminClient.end()
  }
}

/** The server's settings that decide what a commit costs, for the figures' labels. */
export async function durabilityLabel(bench: BenchSchema): Promise<string> {
  const [row] = await bench.admin<{ synchronous_commit: string; fsync: string }>(
    `SELECT current_setting('synchronous_commit') AS synchronous_commit, current_setting('fsync') AS fsync`,
  )
  return `synchronous_commit=${row!.synchronous_commit}, fsync=${row!.fsync}`
}

/**
 * The Store line of the PostgreSQL scenarios: the server, its version and the settings that decide
 * what a commit costs, read from the server the scenarios use.
 */
export async function describePostgres(): Promise<string> {
  const url = new URL(BENCH_POSTGRES_URL)
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL, connectionTimeoutMillis: 5000 })
  try {
    await client.connect()
    const { rows } = await client.query<{ version: string; synchronous_commit: string; fsync: string }>(
      `SELECT current_setting('server_version') AS version,
              current_setting('synchronous_commit') AS synchronous_commit, current_setting('fsync') AS fsync`,
    )
    const row = rows[0]!
    return `postgres (PostgreSQL ${row.version} at ${url.host}, client pg ${pgVersion()}), synchronous_commit=${row.synchronous_commit}, fsync=${row.fsync}`
  } catch (error) {
    return `postgres (PostgreSQL at ${url.host} not reachable: ${(error as Error).message})`
  } finally {
    await client.end().catch(() => {})
  }
}

function pgVersion(): string {
  const require = createRequire(import.meta.url)
  return (require('pg/package.json') as { version: string }).version
}
