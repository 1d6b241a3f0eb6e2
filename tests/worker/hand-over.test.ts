/**
 * Under threads and processes, a worker hands the job it holds for a slot to that slot's busy
 * child (Executor.runNext): the child starts it the moment it sent the outcome before it, and the
 * two outcomes share a commit. Such a job is still the worker's to take back until it starts:
 * a stopping worker gives it back unrun, and one whose lease is lost never runs.
 */
import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'

import { createClient, wrapStore, type SettleParams, type WorkerOptions } from '../../src/index.js'
import { waitFor, waitForEvent } from '../support/async.js'
import { tempStore } from '../support/sqlite-harness.js'
import { allJobs } from '../support/store-harness.js'
import { createWorker, fixtureHandlers, stopWorker } from '../support/workers.js'

const HANDLERS = fixtureHandlers('pool.ts')

for (const strategy of ['processes', 'threads'] as const) {
  describe(`handing held jobs over: ${strategy}`, () => {
    test('short jobs run once each, in order, in one child, their outcomes two or more to a commit', async (t) => {
      const { store } = await tempStore(t)
      const count = 30
      await createClient({ store }).enqueueMany(
        Array.from({ length: count }, (_, n) => ({ name: 'where', payload: { n } })),
      )
      const settles: number[] = []
      const recording = wrapStore(store, {
        around: (call) => {
          if (call.method === 'settle') settles.push((call.params as SettleParams).settlements.length)
          return call.next()
        },
      })
      const { worker, errors } = createWorker(t, {
        store: recording,
        handlers: HANDLERS,
        strategy,
        concurrency: 1,
      })
      const order: string[] = []
      worker.on('job:claimed', (job) => order.push(job.id))
      await worker.start()
      await waitFor(async () => (await store.stats())[0]?.completed === count, 10_000, 'every job completed')
      await stopWorker(worker)

      assert.deepEqual(errors, [])
      const jobs = await allJobs(store)
      assert.deepEqual(
        order,
        jobs.map((job) => job.id).sort((a, b) => Number(a) - Number(b)),
      )
      assert.ok(
        jobs.every((job) => job.attempts === 1),
        'each ran once',
      )
      assert.equal(new Set(jobs.map((job) => job.result)).size, 1, 'all in one child')
      assert.equal(worker.counts.claimed, count)
      assert.ok(settles.length < count, `commits: ${JSON.stringify(settles)}`)
    })

    /**
     * A worker running a `firstMs` job with a second one held: the claim took both, and the
     * second went to the child in the same turn as the first started there.
     */
    const oneWaitingInTheChild = async (
      t: TestContext,
      firstMs: number,
      options: Partial<WorkerOptions> = {},
    ) => {
      const { store } = await tempStore(t)
      const client = createClient({ store })
      const first = await client.enqueue('timed', { ms: firstMs })
      const second = await client.enqueue('where', null)
      const started = createWorker(t, {
        store,
        handlers: HANDLERS,
        strategy,
        concurrency: 1,
        prefetch: 1,
        ...options,
      })
      const claimed = waitForEvent(started.worker, 'job:claimed')
      await started.worker.start()
      assert.equal((await claimed)[0].id, first.id)
      return { store, first, second, ...started }
    }

    test('a stopping worker takes back the job waiting in its child: ready in its place, attempt unused', async (t) => {
      const { store, first, second, worker, errors } = await oneWaitingInTheChild(t, 1000)
      assert.equal(await stopWorker(worker), 'requested')

      assert.deepEqual(errors, [])
      assert.equal(worker.counts.claimed, 1)
      assert.deepEqual(
        (await allJobs(store)).map((job) => [job.id, job.state, job.attempts]),
        [
          [first.id, 'completed', 1],
          [second.id, 'ready', 0],
        ],
      )
    })

    test('a job waiting in the child whose lease is lost never runs', async (t) => {
      const { store, first, second, worker, errors } = await oneWaitingInTheChild(t, 1500, { leaseMs: 600 })
      const lost = waitForEvent(worker, 'job:lease-lost', () => true, 2000)
      assert.equal(await store.cancel({ ids: [second.id] }), 1)
      assert.equal((await lost)[0].id, second.id)
      await waitFor(async () => (await store.stats())[0]?.completed === 1, 5000, 'the first job completed')
      await stopWorker(worker)

      assert.deepEqual(errors, [])
      // It never started: a job counts as claimed, for the worker, once it starts.
      assert.equal(worker.counts.claimed, 1)
      assert.equal(worker.counts.leaseLost, 1)
      const jobs = await allJobs(store)
      assert.deepEqual(
        jobs.map((job) => [job.id, job.state, job.attempts, job.lastError?.kind ?? null]),
        [
          [first.id, 'completed', 1, null],
          [second.id, 'dead', 1, 'cancelled'],
        ],
      )
    })
  })
}
