/**
 * Cleanup that runs whatever the test did: last-in first-out, in one `after` hook per test, so a
 * worker started on a store is stopped before that store is closed, and child processes are
 * killed before their directory goes.
 */
import type { TestContext } from 'node:test'

const cleanups = new WeakMap<TestContext, (() => unknown)[]>()

/** Runs `fn` after the test, before everything deferred earlier in the same test. */
export function defer(t: TestContext, fn: () => unknown): void {
  let stack = cleanups.get(t)
  if (stack === undefined) {
    const created: (() => unknown)[] = []
    stack = created
    cleanups.set(t, created)
    t.after(async () => {
      let firstError: unknown = null
      while (created.length > 0) {
        try {
          await created.pop()!()
        } catch (error) {
          firstError ??= error
        }
      }
      if (firstError !== null) throw firstError
    })
  }
  stack.push(fn)
}
