/**
 * Lease fencing end to end: once a worker's lease on a job is taken from it (recovered as expired
 * and claimed by someone else, or cancelled), nothing that worker does about the job reaches the
 * store. Leases are stolen the way the store's recovery sweep would, by running it with a clock far
 * in the future, rather than by waiting for them to run out.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { createClient, type JobContext } from '../../src/index.js'
import { deferred, waitForEvent } from '../support/async.js'
import { tempStore } from '../support/sqlite-harness.js'
import { getExistingJob } from '../support/store-calls.js'
import { createWorker, stopWorker } from '../support/workers.js'

const FAR_FUTURE = () => Date.now() + 24 * 3600 * 1000

test("a worker whose lease was recovered and re-claimed gets 'lease_lost' on settle; the new owner's result stays", async (t) => {
  const { store, openPeer } = await tempStore(t)
  const { id } = await createClient({ store }).enqueue('charge', { cents: 500 })

  // Worker A: a long lease, so no renewal notices the theft before A settles.
  const releaseA = deferred()
  let contextA: JobContext | undefined
  const a = createWorker(t, {
    store,
    workerId: 'worker-a',
    concurrency: 1,
    leaseMs: 30_000,
    handlers: {
      charge: async (_payload: unknown, ctx: JobContext) => {
        contextA = ctx
        await releaseA.promise
        return { chargedBy: 'A' }
      },
    },
  })
  const claimedByA = waitForEvent(a.worker, 'job:claimed')
  await a.worker.start()
  await claimedByA

  // The sweep takes the job from A, as if A's lease had expired.
  const recovered = await store.recoverExpired({ now: FAR_FUTURE() })
  assert.deepEqual(recovered, { retried: [id], dead: [], clamped: 0, expired: [] })
  const afterRecovery = await getExistingJob(store, id)
  assert.equal(afterRecovery.state, 'ready')
  assert.equal(afterRecovery.lastError?.kind, 'lease_expired')
  assert.match(afterRecovery.lastError?.message ?? '', /worker-a/)

  // Worker B, on its own connection, claims it and completes it.
  const b = createWorker(t, {
    store: await openPeer(),
    workerId: 'worker-b',
    handlers: { charge: () => ({ chargedBy: 'B' }) },
  })
  const completedByB = waitForEvent(b.worker, 'job:completed')
  await b.worker.start()
  const [jobOfB] = await completedByB
  assert.equal(jobOfB.attempts, 2)

  // A finishes late: its settlement is fenced off.
  const lostByA = waitForEvent(a.worker, 'job:lease-lost')
  releaseA.resolve()
  const [jobOfA] = await lostByA
  assert.equal(jobOfA.id, id)
  assert.equal(contextA?.signal.aborted, false, 'A learned of the loss from its settle, not a renewal')
  assert.deepEqual(a.worker.counts, {
    claimed: 1,
    completed: 0,
    failed: 0,
    dead: 0,
    snoozed: 0,
    leaseLost: 1,
  })
  assert.equal(b.worker.counts.completed, 1)

  const job = await getExistingJob(store, id)
  assert.equal(job.state, 'completed')
  assert.deepEqual(job.result, { chargedBy: 'B' })
  assert.equal(job.attempts, 2)
  assert.equal(job.workerId, null)
  assert.deepEqual(a.errors, [])
  assert.deepEqual(b.errors, [])
})

test("a worker learns of a stolen lease at its next renewal and aborts the handler's signal", async (t) => {
  const { store } = await tempStore(t)
  const { id } = await createClient({ store }).enqueue('crunch', null)

  let context: JobContext | undefined
  const { worker, errors } = createWorker(t, {
    store,
    workerId: 'renewing-worker',
    concurrency: 1,
    leaseMs: 300, // renewed every 100 ms
    handlers: {
      crunch: (_payload: unknown, ctx: JobContext) => {
        context = ctx
        return new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve('gave up')))
      },
    },
  })
  const claimed = waitForEvent(worker, 'job:claimed')
  await worker.start()
  await claimed

  // Stolen: recovered, then claimed at once by another worker (before this one frees its slot).
  assert.deepEqual(await store.recoverExpired({ now: FAR_FUTURE() }), {
    retried: [id],
    dead: [],
    clamped: 0,
    expired: [],
  })
  const lost = waitForEvent(worker, 'job:lease-lost', () => true, 2000)
  const [thief] = await store.claim({ queues: ['default'], limit: 1, leaseMs: 60_000, workerId: 'thief' })
  assert.equal(thief?.id, id)
  await lost
  assert.equal(context?.signal.aborted, true)

  // The thief's settlement is the one that counts.
  assert.deepEqual(
    (
      await store.settle({
        settlements: [{ kind: 'completed', id, leaseToken: thief.leaseToken, result: 'by the thief' }],
      })
    ).settled,
    ['ok'],
  )
  const job = await getExistingJob(store, id)
  assert.equal(job.state, 'completed')
  assert.equal(job.result, 'by the thief')
  assert.equal(job.attempts, 2)
  assert.equal(worker.counts.leaseLost, 1)
  assert.equal(worker.counts.completed + worker.counts.snoozed + worker.counts.failed, 0)
  assert.deepEqual(errors, [])
})

test('cancelling a running job aborts its handler and leaves it dead as cancelled', async (t) => {
  const { store } = await tempStore(t)
  const { id } = await createClient({ store }).enqueue('export', null)

  const aborted = deferred()
  const { worker, errors } = createWorker(t, {
    store,
    leaseMs: 300,
    handlers: {
      export: (_payload: unknown, { signal }: JobContext) =>
        new Promise((resolve) =>
          signal.addEventListener('abort', () => {
            aborted.resolve()
            resolve('half done')
          }),
        ),
    },
  })
  const claimed = waitForEvent(worker, 'job:claimed')
  await worker.start()
  await claimed

  const lost = waitForEvent(worker, 'job:lease-lost', () => true, 2000)
  assert.equal(await store.cancel({ ids: [id] }), 1)
  await lost
  await aborted.promise
  // Let any late write of the worker's land before checking none did.
  await stopWorker(worker)

  const job = await getExistingJob(store, id)
  assert.equal(job.state, 'dead')
  assert.equal(job.lastError?.kind, 'cancelled')
  assert.equal(job.result, null)
  assert.equal(worker.counts.leaseLost, 1)
  assert.deepEqual(errors, [])
})

test('a recovery sweep puts back jobs whose lease ran out, or ends them dead when no attempts are left', async (t) => {
  const { store } = await tempStore(t)
  const client = createClient({ store })
  const { id: retryId } = await client.enqueue('resume', { n: 1 }, { maxAttempts: 3 })
  const { id: lastId } = await client.enqueue('resume', { n: 2 }, { maxAttempts: 1 })
  // A worker that died a minute ago: its leases are long expired.
  const ghost = {
    queues: ['default'],
    limit: 2,
    leaseMs: 1000,
    workerId: 'ghost',
    now: Date.now() - 60_000,
  }
  assert.equal((await store.claim(ghost)).length, 2)

  const { worker, errors } = createWorker(t, {
    store,
    recoverIntervalMs: 60_000,
    handlers: { resume: ({ n }: { n: number }) => n },
  })
  const swept = waitForEvent(worker, 'recover:done')
  const completed = waitForEvent(worker, 'job:completed')
  await worker.start()
  // The sweep every worker runs when it starts.
  assert.deepEqual(await swept, [{ retried: [retryId], dead: [lastId], clamped: 0, expired: [] }])
  await completed

  const resumed = await getExistingJob(store, retryId)
  assert.equal(resumed.state, 'completed')
  assert.equal(resumed.attempts, 2)
  const dead = await getExistingJob(store, lastId)
  assert.equal(dead.state, 'dead')
  assert.equal(dead.attempts, 1)
  assert.equal(dead.lastError?.kind, 'lease_expired')
  assert.match(dead.lastError?.message ?? '', /ghost/)

  // recoverOnce sweeps on demand, every queue (not only the worker's).
  const { id: elsewhereId } = await client.enqueue('resume', { n: 3 }, { queue: 'elsewhere' })
  assert.equal((await store.claim({ ...ghost, queues: ['elsewhere'], now: Date.now() - 60_000 })).length, 1)
  assert.deepEqual(await worker.recoverOnce(), { retried: [elsewhereId], dead: [], clamped: 0, expired: [] })
  const elsewhere = await getExistingJob(store, elsewhereId)
  assert.equal(elsewhere.state, 'ready')
  assert.equal(elsewhere.attempts, 1)
  assert.deepEqual(errors, [])
})
