/**
 * Fresh, empty stores of each kind for a scenario that measures the same thing on all three: a
 * SQLite file (durability full), a PostgreSQL schema, or a namespace on the benchmark's own Redis
 * server, each with a producer, closed after the body.
 */
import type { Client } from '../../src/client/client.js'
import type { Store } from '../../src/store/store.js'
import { sqliteStoreUrl } from './child-worker.js'
import { withBenchSchema } from './postgres.js'
import { openRedisBench, REDIS_BENCH_SETUP, withBenchRedis } from './redis.js'
import { openBenchStore } from './store.js'
import { withTempDir } from './temp.js'
import type { BenchStoreKind, Figure, ScenarioDef } from './types.js'

/** A store and a producer on it, both open for the measurement. */
export interface Opened {
  store: Store
  client: Client
  /** The store's `--store` URL, for a `ferry work` child on the same data. */
  url: string
}

/** Runs body on a fresh, empty store of one kind (a file, schema or namespace of its own), closed after. */
export type Fresh = <T>(body: (opened: Opened) => Promise<T>) => Promise<T>

/** Runs fn with the means to get fresh stores of one kind. */
export type WithStores = <T>(fn: (fresh: Fresh) => Promise<T>) => Promise<T>

/** Runs body on what `open` opened, and closes it whatever happens. */
async function closing<T, O extends Omit<Opened, 'url'> & { close(): Promise<void> }>(
  open: Promise<O>,
  url: (opened: O) => string,
  body: (opened: Opened) => Promise<T>,
): Promise<T> {
  const opened = await open
  try {
    return await body({ store: opened.store, client: opened.client, url: url(opened) })
  } finally {
    await opened.close()
  }
}

export const FRESH_STORES: Record<BenchStoreKind, WithStores> = {
  sqlite: (fn) =>
    withTempDir('fresh-stores', (dir) => {
      let n = 0
      return fn((body) =>
        closing(openBenchStore(dir, 'full', `bench-${++n}.db`), (o) => sqliteStoreUrl(o.path, 'full'), body),
      )
    }),
  postgres: (fn) =>
    fn((body) =>
      withBenchSchema(async (bench) =>
        body({ store: await bench.open(), client: await bench.client(), url: bench.url }),
      ),
    ),
  redis: (fn) =>
    withBenchRedis('fresh-stores', (server) => {
      let n = 0
      return fn((body) => closing(openRedisBench(server, `fresh-${++n}`), (o) => o.url, body))
    }),
}

/** Where each store's figures come from, as a scenario's summary names it. */
const WHERE: Record<BenchStoreKind, string> = {
  sqlite: 'SQLite (durability full)',
  postgres: 'PostgreSQL',
  redis: `Redis (${REDIS_BENCH_SETUP})`,
}

/**
 * One measurement as a scenario per store: `name` on SQLite, `postgres-name` and `redis-name`,
 * each summary starting with where it ran.
 */
export function scenariosPerStore(
  name: string,
  summary: string,
  sizes: { fullSize: number; quickSize: number },
  run: (kind: BenchStoreKind) => (size: number) => Promise<Figure[]>,
): Record<BenchStoreKind, ScenarioDef> {
  const def = (kind: BenchStoreKind): ScenarioDef => ({
    name: kind === 'sqlite' ? name : `${kind}-${name}`,
    store: kind,
    summary: `${WHERE[kind]}: ${summary}`,
    ...sizes,
    run: run(kind),
    targets: {},
  })
  return { sqlite: def('sqlite'), postgres: def('postgres'), redis: def('redis') }
}
