/**
 * An idle worker sleeps in store.waitForWork rather than polling: counted through a Proxy that
 * passes every call through to the real SQLite store and counts it.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { createClient, type Store } from '../../src/index.js'
import { sleep, waitForEvent } from '../support/async.js'
import { tempStore } from '../support/sqlite-harness.js'
import { createWorker } from '../support/workers.js'

/** The store, with every method call counted by name. */
function counting(store: Store): { store: Store; calls: Map<string, number> } {
  const calls = new Map<string, number>()
  const proxy = new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        calls.set(String(property), (calls.get(String(property)) ?? 0) + 1)
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
  return { store: proxy, calls }
}

test('an idle worker makes a handful of store calls in 1.5 s, then wakes for a job from another connection', async (t) => {
  const { store: real, openPeer } = await tempStore(t)
  const { store, calls } = counting(real)
  const { worker, errors } = createWorker(t, { store, handlers: { ping: () => 'pong' } })
  await worker.start()

  await sleep(1500)
  const idle = new Map(calls)
  t.diagnostic(`store calls in 1.5 s idle: ${JSON.stringify(Object.fromEntries(idle))}`)
  // An idle worker settles nothing, so a settle never carries its claim.
  const claims = idle.get('claim') ?? 0
  const total = [...idle.values()].reduce((sum, count) => sum + count, 0)
  assert.ok(claims >= 1 && claims <= 3, `${claims} claims while idle`)
  assert.ok((idle.get('waitForWork') ?? 0) <= 3, `${idle.get('waitForWork')} waits while idle`)
  assert.ok(total <= 10, `${total} store calls while idle`)

  // It was asleep, not stuck: a job committed by another connection wakes it.
  const completed = waitForEvent(worker, 'job:completed', () => true, 2000)
  const { id } = await createClient({ store: await openPeer() }).enqueue('ping', null)
  const [job, result] = await completed
  assert.equal(job.id, id)
  assert.equal(result, 'pong')
  assert.deepEqual(errors, [])
})
