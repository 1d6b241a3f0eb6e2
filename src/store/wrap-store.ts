/**
 * The instrumentation seam: a Store whose every call runs through one around-hook. The hook is
 * given the method's name, its params and `next()`, which calls the real store; what it resolves
 * with (or throws) is what the caller gets. Metrics time `next()`, tracing runs it inside a span's
 * context, chaos's recording store writes down what the store answered, all without knowing
 * which store they wrap or mirroring its methods: the 20 methods of the contract are the whole
 * surface, and capabilities (and the store's job event log) pass through as they are.
 */
import { STORE_METHODS, type Store, type StoreMethod } from './store.js'
import { EVENT_CHANNEL, type EventSource } from './events/job-event.js'

/** One call to the wrapped store, by method: `params` as the caller passed them (undefined if none). */
export type StoreCall = {
  [M in StoreMethod]: {
    method: M
    params: Parameters<Store[M]>[0]
    /** Calls the real store with these params. Call it once, and resolve with what it resolved. */
    next: () => ReturnType<Store[M]>
  }
}[StoreMethod]

export interface StoreHooks {
  /**
   * Runs around every call: must resolve with `next()`'s result and reject with its error (or
   * with one of its own, which the caller then gets instead).
   */
  around(call: StoreCall): Promise<unknown>
}

export function wrapStore(store: Store, hooks: StoreHooks): Store {
  const wrapped = Object.defineProperties(
    {},
    {
      kind: { get: () => store.kind, enumerable: true },
      capabilities: { get: () => store.capabilities, enumerable: true },
    },
  ) as Record<StoreMethod, (params?: unknown) => Promise<unknown>>
  // The store's job event log, when it keeps one, stays reachable through any wrapper.
  const source = store as Partial<EventSource>
  if (typeof source[EVENT_CHANNEL] === 'function')
    Object.defineProperty(wrapped, EVENT_CHANNEL, {
      value: () => (store as unknown as EventSource)[EVENT_CHANNEL](),
    })
  for (const method of STORE_METHODS) {
    const real = store[method] as (params?: unknown) => Promise<unknown>
    wrapped[method] = (params?: unknown) => {
      const next = (): Promise<unknown> => real.call(store, params)
      try {
        return hooks.around({ method, params, next } as StoreCall)
      } catch (error) {
        // A hook that throws before it returns a promise still fails the call the async way.
        return Promise.reject(error)
      }
    }
  }
  return wrapped as unknown as Store
}
