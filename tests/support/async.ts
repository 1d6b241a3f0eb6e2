/**
 * Waiting in tests, without sleeping where something can be awaited: a deadline on a promise, a
 * condition polled until it holds, the next event an emitter sends.
 */
import type { EventEmitter } from 'node:events'

/**
 * Resolves with the value, or rejects if it takes longer than `ms` (so a hung wait fails instead
 * of hanging). `what` names the wait in the error; a function is asked only then, so it can say
 * how far the wait got.
 */
export async function within<T>(ms: number, what: string | (() => string), promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    const name = () => (typeof what === 'string' ? what : what())
    timer = setTimeout(() => reject(new Error(`${name()} did not settle within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

export interface Deferred<T> {
  promise: Promise<T>
  resolve: (value: T) => void
}

/** A promise and its resolve function (Promise.withResolvers is Node 22). */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

/**
 * Resolves with the arguments of the first `name` event for which `predicate` holds. Create the
 * promise before doing what causes the event; await it after.
 */
export function waitForEvent<T extends Record<keyof T, unknown[]>, K extends keyof T & string>(
  emitter: EventEmitter<T>,
  name: K,
  predicate: (...args: T[K]) => boolean = () => true,
  timeoutMs = 5000,
): Promise<T[K]> {
  // The typed overloads do not accept a generic key: listen through the untyped interface.
  const plain = emitter as unknown as EventEmitter
  const promise = new Promise<T[K]>((resolve, reject) => {
    const listener = (...args: unknown[]): void => {
      if (!predicate(...(args as T[K]))) return
      cleanup()
      resolve(args as T[K])
    }
    const timer = setTimeout(() => {
      cleanup()
      reject(new Error(`no '${name}' event (matching the predicate) within ${timeoutMs} ms`))
    }, timeoutMs)
    const cleanup = (): void => {
      clearTimeout(timer)
      plain.off(name, listener)
    }
    plain.on(name, listener)
  })
  // Awaited later: a timeout before then must not count as an unhandled rejection.
  promise.catch(() => undefined)
  return promise
}

/** Resolves with the first truthy value of `check`, called every `intervalMs`. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 5000,
  what = 'the condition',
  intervalMs = 20,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value) return value as NonNullable<T>
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`)
    await sleep(intervalMs)
  }
}
