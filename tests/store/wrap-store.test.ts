/**
 * wrapStore, the instrumentation seam, over a real SQLite store: every method of the contract goes
 * through the hook, which sees the params as given and the result or error as the store gave it,
 * and the caller gets exactly what the store answered.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { STORE_METHODS, ValidationError, wrapStore, type StoreCall } from '../../src/index.js'
import { tempDatabase } from '../support/sqlite-harness.js'
import { newJob } from '../support/store-harness.js'
import { normalizeSchedule } from '../../src/core/schedule.js'

interface Seen {
  method: StoreCall['method']
  params: unknown
  outcome: { result: unknown } | { error: unknown }
}

test('every Store method passes through the hook, with its params and result unchanged', async (t) => {
  const database = tempDatabase(t)
  const real = await database.open()
  const seen: Seen[] = []
  const store = wrapStore(real, {
    async around(call) {
      try {
        const result = await call.next()
        seen.push({ method: call.method, params: call.params, outcome: { result } })
        return result
      } catch (error) {
        seen.push({ method: call.method, params: call.params, outcome: { error } })
        throw error
      }
    },
  })
  assert.equal(store.kind, real.kind)
  assert.deepEqual(store.capabilities, real.capabilities)

  const now = Date.now()
  const SCHEDULE = { id: 'hourly', cron: '0 * * * *', job: { name: 'report' } }
  const lease = { leaseMs: 60_000, workerId: 'worker-1' }
  const calls: [StoreCall['method'], () => Promise<unknown>][] = [
    ['migrate', () => store.migrate()],
    ['enqueue', () => store.enqueue({ jobs: [newJob(), newJob(), newJob()], now })],
    ['claim', () => store.claim({ queues: ['default'], limit: 2, ...lease, now })],
    ['renew', () => store.renew({ leases: [{ id: '1', leaseToken: 'forged' }], leaseMs: 1000, now })],
    [
      'settle',
      () => store.settle({ settlements: [], claim: { queues: ['default'], limit: 1, ...lease }, now }),
    ],
    ['waitForWork', () => store.waitForWork({ queues: ['default'], timeoutMs: 1 })],
    ['findExpiredLeases', () => store.findExpiredLeases({ now })],
    ['recoverExpired', () => store.recoverExpired({ now: now + 120_000, clampLeases: true })],
    ['listJobs', () => store.listJobs({ ids: ['3', '1'] })],
    ['stats', () => store.stats({ now })],
    ['retry', () => store.retry({ allDead: true, now })],
    ['cancel', () => store.cancel({ ids: ['2'], now })],
    ['purge', () => store.purge({ state: 'dead', now: now + 1 })],
    ['deleteJobs', () => store.deleteJobs({ ids: ['2'], now })],
    ['changeJobs', () => store.changeJobs({ changes: [{ id: '3', priority: 2 }], now })],
    ['prune', () => store.prune({ now: now + 1 })],
    ['schedules', () => store.schedules({ put: [normalizeSchedule(SCHEDULE)], now })],
    [
      'fireSchedule',
      () => store.fireSchedule({ id: 'hourly', version: 1, lastSlot: 0, toSlot: 0, jobs: [], now }),
    ],
    ['control', () => store.control({ requestStop: true, now })],
    [
      'heartbeat',
      () =>
        store.heartbeat({
          worker: {
            workerId: 'worker-1',
            host: 'host-a',
            pid: 1,
            queues: ['default'],
            concurrency: 1,
            strategy: 'inline',
            startedAt: now,
            jobs: [],
            activeCount: 0,
          },
          counts: [{ minute: now - (now % 60_000), queue: 'default', completed: 1, failed: 0 }],
          ttlMs: 15_000,
          now,
        }),
    ],
    ['workers', () => store.workers({ now })],
    ['throughput', () => store.throughput({ since: now - 60_000, now })],
    ['removeWorker', () => store.removeWorker({ workerId: 'worker-1' })],
    ['close', () => store.close()],
  ]
  assert.deepEqual(
    calls.map(([method]) => method).sort(),
    [...STORE_METHODS].sort(),
    'this test calls every method of the contract',
  )
  for (const [method, call] of calls) {
    const result = await call()
    const last = seen.at(-1)
    assert.equal(last?.method, method, `${method} went through the hook`)
    assert.deepEqual(last.outcome, { result }, `${method}: the caller got what the store answered`)
  }
  assert.equal(seen.length, STORE_METHODS.length, 'each call went through the hook once')

  // Params reach the hook as given: the same object, not a copy.
  const params = { ids: ['1'] }
  const again = wrapStore(await database.open(), {
    around: (call) => {
      assert.equal(call.params, params)
      return call.next()
    },
  })
  const [job] = (await again.listJobs(params)).jobs
  assert.equal(job?.id, '1')
  // The store's own answer to the same call, for comparison.
  const [fromReal] = (await (await database.open()).listJobs(params)).jobs
  assert.deepEqual(job, fromReal)
})

test("a store's error reaches the hook and the caller unchanged", async (t) => {
  const real = await tempDatabase(t).open()
  const errors: unknown[] = []
  const store = wrapStore(real, {
    async around(call) {
      try {
        return await call.next()
      } catch (error) {
        errors.push(error)
        throw error
      }
    },
  })
  const refused = await store.enqueue({ jobs: [newJob()], tx: {} }).then(
    () => assert.fail('a SQLite store cannot join a transaction'),
    (error: unknown) => error,
  )
  assert.ok(refused instanceof ValidationError)
  assert.equal(refused.field, 'tx')
  assert.deepEqual(errors, [refused])
  assert.equal(errors[0], refused, 'the very error the store threw')
})

test('an error of the hook itself fails the call as a rejection', async (t) => {
  const real = await tempDatabase(t).open()
  const failure = new Error('hook failed')
  const store = wrapStore(real, {
    around: () => {
      throw failure
    },
  })
  const pending = store.stats()
  assert.ok(pending instanceof Promise, 'a rejected promise, not a synchronous throw')
  await assert.rejects(pending, (error: unknown) => error === failure)
})
