/**
 * A worker survives store errors. The errors are real: another connection holds SQLite's write
 * lock (BEGIN IMMEDIATE, as a long transaction of another process would) while the worker's store
 * waits only 10 ms for it, so its writes fail with SQLITE_BUSY until the lock is released.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { createClient, StoreUnavailableError } from '../../src/index.js'
import { deferred, waitForEvent } from '../support/async.js'
import { defer } from '../support/cleanup.js'
import { holdWriteLock, tempStore } from '../support/sqlite-harness.js'
import { getExistingJob } from '../support/store-calls.js'
import { createWorker } from '../support/workers.js'

function assertBusy(errors: unknown[]): void {
  for (const error of errors) {
    assert.ok(error instanceof StoreUnavailableError, String(error))
    assert.match(error.message, /SQLITE_BUSY/)
  }
}

test('a worker whose claims fail on a locked database keeps retrying and runs the job once it is free', async (t) => {
  const { store, path, openPeer } = await tempStore(t)
  const { id } = await createClient({ store }).enqueue('ping', null)
  const workerStore = await openPeer({ busyTimeoutMs: 10 })
  const lock = holdWriteLock(t, path)

  const { worker, errors } = createWorker(t, { store: workerStore, handlers: { ping: () => 'pong' } })
  defer(t, lock.release) // before the worker is stopped
  // At most one of these comes from the recovery sweep at start: the others are failed claims.
  const failures = waitForEvent(worker, 'worker:error', () => errors.length >= 3, 5000)
  await worker.start()
  await failures
  assertBusy(errors)
  assert.equal(worker.counts.claimed, 0)
  assert.equal((await getExistingJob(store, id)).state, 'ready')

  const completed = waitForEvent(worker, 'job:completed', () => true, 5000)
  lock.release()
  const [job, result] = await completed
  assert.equal(job.id, id)
  assert.equal(result, 'pong')
  assert.equal((await getExistingJob(store, id)).state, 'completed')
})

test('a settlement that fails on a locked database is retried until it lands', async (t) => {
  const { store, path, openPeer } = await tempStore(t)
  const { id } = await createClient({ store }).enqueue('slow', null)
  const workerStore = await openPeer({ busyTimeoutMs: 10 })

  const finish = deferred()
  const { worker, errors } = createWorker(t, {
    store: workerStore,
    handlers: { slow: async () => (await finish.promise, 'landed') },
  })
  const claimed = waitForEvent(worker, 'job:claimed')
  await worker.start()
  await claimed

  const lock = holdWriteLock(t, path)
  const failed = waitForEvent(worker, 'worker:error', () => errors.length >= 2, 5000)
  finish.resolve()
  await failed
  assertBusy(errors)
  assert.equal((await getExistingJob(store, id)).state, 'active')

  const completed = waitForEvent(worker, 'job:completed', () => true, 5000)
  lock.release()
  await completed
  const job = await getExistingJob(store, id)
  assert.equal(job.state, 'completed')
  assert.equal(job.result, 'landed')
  assert.equal(job.attempts, 1)
})

test('a worker started on a locked database starts, and writes and fires its schedules once it is free', async (t) => {
  const { store, path, openPeer } = await tempStore(t)
  const workerStore = await openPeer({ busyTimeoutMs: 10 })
  const lock = holdWriteLock(t, path)

  const { worker, errors } = createWorker(t, {
    store: workerStore,
    schedules: [{ id: 'tick', cron: '* * * * * *', job: { name: 'tick', payload: null } }],
    handlers: { tick: () => 'ticked' },
  })
  defer(t, lock.release) // before the worker is stopped
  const failed = waitForEvent(worker, 'worker:error', () => errors.length >= 2, 5000)
  await worker.start()
  await failed
  assertBusy(errors)
  assert.deepEqual((await store.schedules()).schedules, [], 'nothing written while locked')

  const completed = waitForEvent(worker, 'job:completed', () => true, 15_000)
  lock.release()
  const [job, result] = await completed
  assert.equal(job.schedule?.id, 'tick')
  assert.equal(result, 'ticked')
  assert.deepEqual(
    (await store.schedules()).schedules.map((schedule) => schedule.id),
    ['tick'],
  )
})
