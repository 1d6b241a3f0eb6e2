/**
 * prefetch: a worker claims jobs ahead and holds them for its next free slot. It never runs more
 * than `concurrency` at once, renews the leases of the jobs it holds, counts them against its job
 * limit, and gives them back when it stops: ready again in their place, the attempt unused. By
 * default ('auto') it holds jobs only while they are short (src/worker/prefetch.test.ts has the rule).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import {
  createClient,
  ValidationError,
  Worker,
  wrapStore,
  type Store,
  type StoreCall,
} from '../../src/index.js'
import { AUTO_MOST_AHEAD } from '../../src/worker/prefetch.js'
import { deferred, sleep, waitFor, waitForEvent } from '../support/async.js'
import { tempStore } from '../support/sqlite-harness.js'
import { allJobs } from '../support/store-harness.js'
import { createWorker, stopWorker } from '../support/workers.js'

test('a worker holds up to `prefetch` jobs ahead and runs at most `concurrency` at once', async (t) => {
  const { store } = await tempStore(t)
  const client = createClient({ store })
  await client.enqueueMany(Array.from({ length: 10 }, (_, n) => ({ name: 'step', payload: { n } })))

  const release = deferred()
  let running = 0
  let mostAtOnce = 0
  const { worker, errors } = createWorker(t, {
    store,
    concurrency: 2,
    prefetch: 3,
    handlers: {
      step: async () => {
        mostAtOnce = Math.max(mostAtOnce, ++running)
        await release.promise
        running--
      },
    },
  })
  await worker.start()
  await waitFor(async () => (await store.stats())[0]?.active === 5, 5000, 'two running and three held jobs')
  assert.equal(worker.activeCount, 2)

  release.resolve()
  await waitFor(async () => (await store.stats())[0]?.completed === 10, 5000, 'every job completed')
  assert.equal(mostAtOnce, 2)
  assert.deepEqual(errors, [])
})

test('a stopping worker gives back the jobs it held: ready in their place, attempt unused', async (t) => {
  const { store } = await tempStore(t)
  const client = createClient({ store })
  const ids = await Promise.all([1, 2, 3].map(async (n) => (await client.enqueue('step', { n })).id))

  const release = deferred()
  const { worker, errors } = createWorker(t, {
    store,
    concurrency: 1,
    prefetch: 2,
    handlers: { step: async () => await release.promise },
  })
  const claimed = waitForEvent(worker, 'job:claimed')
  await worker.start()
  await claimed
  await waitFor(async () => (await store.stats())[0]?.active === 3, 5000, 'one running and two held jobs')

  const stop = stopWorker(worker)
  await sleep(20)
  release.resolve()
  assert.equal(await stop, 'requested')

  const jobs = await allJobs(store)
  assert.deepEqual(
    jobs.map((job) => [job.id, job.state, job.attempts]),
    [
      [ids[0], 'completed', 1],
      [ids[1], 'ready', 0],
      [ids[2], 'ready', 0],
    ],
  )
  // Back in their place: a claim takes them in enqueue order.
  const next = await store.claim({ queues: ['default'], limit: 2, leaseMs: 10_000, workerId: 'other' })
  assert.deepEqual(
    next.map((job) => job.id),
    [ids[1], ids[2]],
  )
  assert.deepEqual(errors, [])
})

test('held jobs keep their leases while they wait longer than a lease', async (t) => {
  const { store } = await tempStore(t)
  const client = createClient({ store })
  await client.enqueueMany([1, 2].map((n) => ({ name: 'slow', payload: { n } })))

  const { worker, errors } = createWorker(t, {
    store,
    concurrency: 1,
    prefetch: 1,
    leaseMs: 300,
    recoverIntervalMs: 50,
    handlers: { slow: async () => await sleep(1000) },
  })
  const lost: string[] = []
  worker.on('job:lease-lost', (job) => lost.push(job.id))
  await worker.start()
  await waitFor(async () => (await store.stats())[0]?.completed === 2, 10_000, 'both jobs completed')

  assert.deepEqual(lost, [])
  const jobs = await allJobs(store)
  assert.deepEqual(
    jobs.map((job) => job.attempts),
    [1, 1],
    'each job ran once: the held one was not recovered while it waited',
  )
  assert.deepEqual(errors, [])
})

test('held jobs count against the job limit: exactly `jobLimit` jobs run, the rest stay ready', async (t) => {
  const { store } = await tempStore(t)
  const client = createClient({ store })
  await client.enqueueMany(Array.from({ length: 8 }, (_, n) => ({ name: 'step', payload: { n } })))

  const { worker, errors } = createWorker(t, {
    store,
    concurrency: 1,
    prefetch: 5,
    jobLimit: 3,
    handlers: { step: async () => await sleep(5) },
  })
  await worker.start()
  assert.equal(await worker.stopped, 'job-limit')

  const jobs = await allJobs(store)
  assert.equal(jobs.filter((job) => job.state === 'completed').length, 3)
  assert.deepEqual(
    jobs.filter((job) => job.state !== 'completed').map((job) => [job.state, job.attempts]),
    Array.from({ length: 5 }, () => ['ready', 0]),
  )
  assert.deepEqual(errors, [])
})

/** The store, and the most jobs any claim of the worker asked for (a claim, or one carried by settle or waitForWork). */
function recordClaimLimits(store: Store): { store: Store; mostAsked: () => number } {
  let most = 0
  const limitOf = (call: StoreCall): number | undefined => {
    if (call.method === 'claim') return call.params.limit
    if (call.method === 'settle' || call.method === 'waitForWork') return call.params.claim?.limit
    return undefined
  }
  const wrapped = wrapStore(store, {
    around: (call) => {
      most = Math.max(most, limitOf(call) ?? 0)
      return call.next()
    },
  })
  return { store: wrapped, mostAsked: () => most }
}

test('by default a worker of few slots running short jobs holds AUTO_MOST_AHEAD jobs ahead', async (t) => {
  const { store: real } = await tempStore(t)
  await createClient({ store: real }).enqueueMany(
    Array.from({ length: 300 }, (_, n) => ({ name: 'quick', payload: { n } })),
  )
  const { store, mostAsked } = recordClaimLimits(real)

  const { worker, errors } = createWorker(t, { store, concurrency: 2, handlers: { quick: async () => {} } })
  assert.equal(worker.prefetch, 'auto')
  await worker.start()
  await waitFor(async () => (await real.stats())[0]?.completed === 300, 10_000, 'every job completed')

  assert.equal(mostAsked(), 2 + AUTO_MOST_AHEAD, 'two slots and AUTO_MOST_AHEAD jobs ahead')
  assert.deepEqual(errors, [])
})

test('by default a worker running long jobs holds none ahead, leaving them to other workers', async (t) => {
  const { store: real } = await tempStore(t)
  await createClient({ store: real }).enqueueMany(
    Array.from({ length: 6 }, (_, n) => ({ name: 'slow', payload: { n } })),
  )
  const { store, mostAsked } = recordClaimLimits(real)

  const { worker, errors } = createWorker(t, {
    store,
    concurrency: 2,
    handlers: { slow: async () => await sleep(100) },
  })
  await worker.start()
  await waitFor(async () => (await real.stats())[0]?.active === 2, 5000, 'the first two running')
  await waitFor(async () => (await real.stats())[0]?.completed === 6, 10_000, 'every job completed')

  assert.equal(mostAsked(), 2, 'never more than its free slots')
  assert.deepEqual(errors, [])
})

test("a prefetch that is neither 'auto' nor a whole number from 0 to 10,000 is refused, naming prefetch", async (t) => {
  const { store } = await tempStore(t)
  for (const prefetch of [-1, 1.5, 10_001, Number.NaN, 'fast']) {
    assert.throws(
      () => new Worker({ store, handlers: {}, prefetch: prefetch as number }),
      (error: unknown) => error instanceof ValidationError && error.field === 'prefetch',
      String(prefetch),
    )
  }
})
