/**
 * Ferry as its users run it: the compiled package under dist/ (run.ts builds it first), one Client
 * for the producer, one inline Worker at the concurrency asked (its other options at their
 * defaults; prefetch 10 as a row of its own). SQLite at durability 'full' (its default), PostgreSQL
 * and Redis at their defaults. Not its TypeScript sources: under tsx every closure made on a hot
 * path is wrapped to keep its name (a property write each time), about 1 µs per job of a bulk
 * enqueue's validation alone that no user's build pays.
 */
import type * as FerryApi from '../../../src/index.js'
import type { Store } from '../../../src/index.js'
import type * as PostgresApi from '../../../src/postgres.js'
import type * as RedisApi from '../../../src/redis.js'
import type * as SqliteApi from '../../../src/sqlite.js'
import { FERRY_PREFETCH, JOB_NAME, type Adapter, type Producer, type Target } from '../lib/types.js'
import { perStore, producerOf, storePath, storeUrl } from './shared.js'

type Ferry = typeof FerryApi

/** One entry of the compiled package, typed as its source. */
async function fromDist<T>(entry: string): Promise<T> {
  return (await import(new URL(`../../../dist/${entry}`, import.meta.url).href)) as T
}

type Opener = (target: Target) => Promise<Store>

/** Each store's module (and so its driver), loaded before any clock starts (Adapter.load). */
const openers = perStore<Opener>({
  async sqlite() {
    const { SqliteStore } = await fromDist<typeof SqliteApi>('sqlite.js')
    return (target) => SqliteStore.open({ path: storePath(target), durability: 'full' })
  },
  async postgres() {
    const { PostgresStore } = await fromDist<typeof PostgresApi>('postgres.js')
    return (target) => PostgresStore.open({ connectionString: storeUrl(target) })
  },
  async redis() {
    const { RedisStore } = await fromDist<typeof RedisApi>('redis.js')
    return (target) =>
      RedisStore.open({
        url: storeUrl(target),
        // A persistence Ferry finds unsafe is a wrong set-up here: fail rather than measure it.
        onWarning: (warning) => {
          throw new Error(`the benchmark's redis-server is not durable: ${warning}`)
        },
      })
  },
})

/** The package's entry (Client, Worker), loaded with the store's module. */
let ferry: Ferry | null = null

function api(): Ferry {
  if (ferry === null) throw new Error('the adapter was not loaded (Adapter.load)')
  return ferry
}

function openStore(target: Target): Promise<Store> {
  return openers.get()(target)
}

export const adapter: Adapter = {
  product: 'ferry',
  completion: 'durable',

  async load(store) {
    ;[ferry] = await Promise.all([fromDist<Ferry>('index.js'), openers.load(store)])
  },

  async migrate(target) {
    // Opening migrates.
    const store = await openStore(target)
    await store.close()
  },

  async producer(target): Promise<Producer> {
    const store = await openStore(target)
    const client = api().createClient({ store })
    return producerOf({
      one: (payload) => client.enqueue(JOB_NAME, payload),
      many: (payloads) => client.enqueueMany(payloads.map((payload) => ({ name: JOB_NAME, payload }))),
      async close() {
        await client.close()
        await store.close()
      },
    })
  },

  async startWorker(target, { concurrency, variant, hooks }) {
    const store = await openStore(target)
    const worker = new (api().Worker)({
      store,
      handlers: {
        [JOB_NAME]: async () => {
          hooks.onStart()
        },
      },
      concurrency,
      ...(variant === FERRY_PREFETCH.id ? { prefetch: 10 } : {}),
    })
    // 'job:completed' comes once the job's settlement is committed.
    worker.on('job:completed', () => hooks.onCompleted())
    await worker.start()
    return {
      async stop() {
        await worker.stop({ graceful: false })
        await store.close()
      },
    }
  },
}
