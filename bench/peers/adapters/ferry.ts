/**
 * Ferry, from this repository's sources: a Client for the producer, one inline Worker at the
 * concurrency asked (its other options at their defaults; prefetch 10 as a row of its own).
 * SQLite at durability 'full' (its default), PostgreSQL and Redis at their defaults.
 */
import { createClient, Worker, type Store } from '../../../src/index.js'
import { FERRY_PREFETCH, JOB_NAME, type Adapter, type Producer, type Target } from '../lib/types.js'
import { perStore, producerOf, storePath, storeUrl } from './shared.js'

type Opener = (target: Target) => Promise<Store>

/** Each store's module (and so its driver), loaded before any clock starts (Adapter.load). */
const openers = perStore<Opener>({
  async sqlite() {
    const { SqliteStore } = await import('../../../src/sqlite.js')
    return (target) => SqliteStore.open({ path: storePath(target), durability: 'full' })
  },
  async postgres() {
    const { PostgresStore } = await import('../../../src/postgres.js')
    return (target) => PostgresStore.open({ connectionString: storeUrl(target) })
  },
  async redis() {
    const { RedisStore } = await import('../../../src/redis.js')
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

function openStore(target: Target): Promise<Store> {
  return openers.get()(target)
}

export const adapter: Adapter = {
  product: 'ferry',
  completion: 'durable',

  load: openers.load,

  async migrate(target) {
    // Opening migrates.
    const store = await openStore(target)
    await store.close()
  },

  async producer(target): Promise<Producer> {
    const store = await openStore(target)
    const client = createClient({ store })
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
    const worker = new Worker({
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
