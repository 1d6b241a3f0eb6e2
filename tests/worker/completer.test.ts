/**
 * The completer holds an outcome back when the worker asks (settle's `holdMs`: the next job of its
 * slot has started and will end soon), so that both share one commit: the held one goes first, in
 * the flush of the next outcome that is not held, or alone once its hold passes.
 */
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'

import {
  createClient,
  wrapStore,
  type ClaimedJob,
  type Settlement,
  type SettleParams,
} from '../../src/index.js'
import { Completer, LockedRows } from '../../src/worker/completer.js'
import { waitFor } from '../support/async.js'
import { tempStore } from '../support/sqlite-harness.js'
import { createWorker, stopWorker } from '../support/workers.js'

/** A temp store with `count` jobs enqueued, and the store again recording the ids each settle call carried. */
async function storeWithJobs(t: TestContext, count: number) {
  const { store } = await tempStore(t)
  await createClient({ store }).enqueueMany(
    Array.from({ length: count }, (_, n) => ({ name: 'step', payload: { n } })),
  )
  const settles: string[][] = []
  const recording = wrapStore(store, {
    around: (call) => {
      if (call.method === 'settle') settles.push((call.params as SettleParams).settlements.map((s) => s.id))
      return call.next()
    },
  })
  return { store, recording, settles }
}

async function completerWithJobs(t: TestContext, count: number) {
  const { store, recording, settles } = await storeWithJobs(t, count)
  const jobs = await store.claim({ queues: ['default'], limit: count, leaseMs: 30_000, workerId: 'w' })
  const errors: unknown[] = []
  const completer = new Completer({
    store: recording,
    maxInFlight: 2,
    claimToCarry: () => null,
    locks: new LockedRows((error) => errors.push(error)),
    onStoreError: (error) => errors.push(error),
  })
  return { store, jobs, settles, completer, errors }
}

const completed = (job: ClaimedJob): Settlement => ({
  kind: 'completed',
  id: job.id,
  leaseToken: job.leaseToken,
})

test('a held outcome goes first in the flush of the next one that is not held: one settle call', async (t) => {
  const { store, jobs, settles, completer, errors } = await completerWithJobs(t, 3)
  const [a, b, c] = jobs as [ClaimedJob, ClaimedJob, ClaimedJob]
  const writtenA = completer.settle(a, completed(a), 60_000)
  const writtenB = completer.settle(b, completed(b), 60_000)
  // Held, not yet sent: the worker's loop must not claim beside them.
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(settles, [])
  assert.equal(completer.hasPending, true)
  assert.equal(completer.settlingCount, 2)
  assert.deepEqual(
    [...completer.jobs].map((job) => job.id),
    [a.id, b.id],
  )

  assert.equal(await completer.settle(c, completed(c)), 'ok')
  assert.deepEqual(await Promise.all([writtenA, writtenB]), ['ok', 'ok'])
  assert.deepEqual(settles, [[a.id, b.id, c.id]])
  assert.equal((await store.stats())[0]?.completed, 3)
  assert.equal(completer.hasPending, false)
  assert.deepEqual(errors, [])
})

test('a held outcome is written alone once its hold has passed', async (t) => {
  const { jobs, settles, completer } = await completerWithJobs(t, 1)
  const [a] = jobs as [ClaimedJob]
  assert.equal(await completer.settle(a, completed(a), 5), 'ok')
  assert.deepEqual(settles, [[a.id]])
})

test('finish writes held outcomes at once, without waiting for their hold', async (t) => {
  const { jobs, settles, completer } = await completerWithJobs(t, 2)
  const [a, b] = jobs as [ClaimedJob, ClaimedJob]
  const written = Promise.all([
    completer.settle(a, completed(a), 60_000),
    completer.settle(b, completed(b), 60_000),
  ])
  await completer.finish(1000)
  assert.deepEqual(await written, ['ok', 'ok'])
  assert.deepEqual(settles, [[a.id, b.id]])
})

test("a worker writes an outcome in one commit with the next job's, when that job ends a turn of the loop later", async (t) => {
  const count = 20
  const { store, recording, settles } = await storeWithJobs(t, count)
  const { worker, errors } = createWorker(t, {
    store: recording,
    concurrency: 1,
    prefetch: 1,
    // Ends a turn after it started, like an isolated job whose outcome comes back as a message.
    handlers: { step: () => new Promise<void>((resolve) => setImmediate(resolve)) },
  })
  await worker.start()
  await waitFor(async () => (await store.stats())[0]?.completed === count, 5000, 'every job completed')
  await stopWorker(worker)
  assert.deepEqual(errors, [])
  const outcomes = settles.flat()
  assert.equal(outcomes.length, count)
  // In the order the jobs ran, and most of them two to a commit (the first job ran alone: nothing
  // was known of how long jobs run).
  assert.deepEqual(
    outcomes,
    [...outcomes].sort((a, b) => Number(a) - Number(b)),
  )
  assert.ok(settles.length < count * 0.75, `commits: ${JSON.stringify(settles)}`)
})
