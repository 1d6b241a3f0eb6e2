/**
 * Every worker deletes finished jobs past their retention (docs/retention.md): a sweep of
 * Store.prune batches about every retentionIntervalMs, repeated while there is more, reported by
 * 'retention:done', and retried after a store error; `retention: false` turns it off.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { createClient, ValidationError, Worker, wrapStore } from '../../src/index.js'
import { waitForEvent } from '../support/async.js'
import { tempStore } from '../support/sqlite-harness.js'
import { newJob } from '../support/store-harness.js'
import { createWorker } from '../support/workers.js'

test('a worker deletes the jobs its queue no longer keeps, by itself', async (t) => {
  const { store } = await tempStore(t)
  await store.control({ retention: { queue: 'default', completedMs: 0 } })
  const client = createClient({ store })
  const kept = await client.enqueue('ping', null, { queue: 'kept' })
  await client.enqueueMany([1, 2, 3].map((n) => ({ name: 'ping', payload: n })))
  const { worker, errors } = createWorker(t, {
    store,
    queues: ['default', 'kept'],
    handlers: { ping: () => 'pong' },
    retentionIntervalMs: 20,
  })
  let deleted = 0
  const swept = waitForEvent(worker, 'retention:done', (sweep) => (deleted += sweep.deleted) >= 3)
  await worker.start()
  await swept
  assert.equal(deleted, 3)
  const { jobs } = await store.listJobs()
  assert.deepEqual(
    jobs.map((job) => [job.id, job.state]),
    [[kept.id, 'completed']],
    'the completed jobs of a queue with a day of retention stay',
  )
  assert.deepEqual(errors, [])
})

test('a sweep repeats prune while there is more, a batch at a time', async (t) => {
  const { store } = await tempStore(t)
  await store.control({ retention: { queue: 'default', deadMs: 0 } })
  const results = await store.enqueue({
    jobs: Array.from({ length: 2500 }, () => newJob({ delayMs: 60_000 })),
  })
  assert.equal(await store.cancel({ ids: results.map((result) => result.id) }), 2500)
  const worker = new Worker({ store, handlers: { ping: () => null }, retention: false })
  assert.deepEqual(await worker.pruneOnce(), { deleted: 2500, batches: 3 })
  assert.deepEqual((await store.listJobs()).jobs, [])
})

test('a sweep that fails is reported as a worker error, and the next one deletes the jobs', async (t) => {
  const { store: real } = await tempStore(t)
  await real.control({ retention: { queue: 'default', completedMs: 0 } })
  let failures = 1
  const store = wrapStore(real, {
    around(call) {
      if (call.method === 'prune' && failures-- > 0) return Promise.reject(new Error('prune failed'))
      return call.next()
    },
  })
  await createClient({ store }).enqueue('ping', null)
  const { worker, errors } = createWorker(t, {
    store,
    handlers: { ping: () => 'pong' },
    retentionIntervalMs: 20,
  })
  const failed = waitForEvent(worker, 'worker:error')
  const swept = waitForEvent(worker, 'retention:done', (sweep) => sweep.deleted === 1)
  await worker.start()
  const [error] = await failed
  assert.equal((error as Error).message, 'prune failed')
  await swept
  assert.equal(errors.length, 1)
  assert.deepEqual((await real.listJobs()).jobs, [])
})

test('retention: false leaves finished jobs to other workers and `ferry purge`', async (t) => {
  const { store } = await tempStore(t)
  await store.control({ retention: { queue: 'default', completedMs: 0 } })
  const { id } = await createClient({ store }).enqueue('ping', null)
  const { worker } = createWorker(t, {
    store,
    handlers: { ping: () => 'pong' },
    retention: false,
    retentionIntervalMs: 1,
    recoverIntervalMs: 5,
  })
  let swept = false
  worker.on('retention:done', () => (swept = true))
  const completed = waitForEvent(worker, 'job:completed')
  await worker.start()
  await completed
  // Recovery sweeps go on meanwhile: several of them, and still no retention sweep.
  let recoveries = 0
  await waitForEvent(worker, 'recover:done', () => ++recoveries >= 3)
  assert.equal(swept, false)
  assert.equal((await store.listJobs({ ids: [id] })).jobs[0]?.state, 'completed')
})

test('refuses a retention option that is not a boolean, or a bad interval', async (t) => {
  const { store } = await tempStore(t)
  for (const [options, field] of [
    [{ retention: 'no' }, 'retention'],
    [{ retentionIntervalMs: 0 }, 'retentionIntervalMs'],
    [{ retentionIntervalMs: 1.5 }, 'retentionIntervalMs'],
  ] as const) {
    assert.throws(
      () => new Worker({ store, handlers: { ping: () => null }, ...(options as object) }),
      (error: unknown) => error instanceof ValidationError && error.field === field,
    )
  }
})
