// One way to open a store for a piece of work and close it whatever happens: every `ferry` command
// runs its body through it, and a script or a dashboard request can do the same.
import { openStore, type OpenStoreOptions } from '../store/open-store.js'
import type { Store } from '../store/store.js'

/** Which store to open, and how: what openStore takes. */
export interface StoreTarget {
  url: string
  options?: OpenStoreOptions
}

/**
 * Opens the store `target` names, runs `work` with it and closes it, whether `work` returns or
 * throws. No error is wrapped: a store that cannot be reached (named by host and port), a schema
 * that needs `ferry migrate`, or a bad parameter reaches the caller as the store threw it.
 */
export async function withStore<T>(target: StoreTarget, work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(target.url, target.options)
  try {
    return await work(store)
  } finally {
    await store.close()
  }
}
