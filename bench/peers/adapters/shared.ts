/** What the adapters share: reading a target, a producer from two calls, loading per store. */
import type { Producer, StoreKind, Target } from '../lib/types.js'

export function storePath(target: Target): string {
  if (target.store !== 'sqlite') throw new Error(`needs a SQLite target, not ${target.store}`)
  return target.path
}

/** The server's URL; with `store`, only a target of that store. */
export function storeUrl(target: Target, store?: 'postgres' | 'redis'): string {
  if (target.store === 'sqlite' || (store !== undefined && target.store !== store))
    throw new Error(`needs a ${store ?? 'server'} target, not ${target.store}`)
  return target.url
}

/**
 * What an adapter loads per store (its store module, its driver) before any clock starts: load()
 * is Adapter.load, get() what it loaded.
 */
export function perStore<T>(loaders: Record<StoreKind, () => Promise<T>>): {
  load(store: StoreKind): Promise<void>
  get(): T
} {
  let loaded: T | null = null
  return {
    async load(store) {
      loaded = await loaders[store]()
    },
    get() {
      if (loaded === null) throw new Error('the adapter was not loaded (Adapter.load)')
      return loaded
    },
  }
}

/** The payload of every job: its sequence number. */
export interface Payload {
  seq: number
}

/** A Producer from a product's own calls for one job and for many (its bulk path, one call). */
export function producerOf(calls: {
  one(payload: Payload): Promise<unknown>
  many(payloads: Payload[]): Promise<unknown>
  close(): Promise<unknown>
}): Producer {
  return {
    async enqueueOne(seq) {
      await calls.one({ seq })
    },
    async enqueueBulk(first, count) {
      await calls.many(Array.from({ length: count }, (_, i) => ({ seq: first + i })))
    },
    async close() {
      await calls.close()
    },
  }
}
