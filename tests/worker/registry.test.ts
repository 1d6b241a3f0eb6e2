/**
 * A worker keeps its record in the store's registry and sends what it settled per minute
 * (Store.heartbeat): listed from its start, with the jobs it runs, its counts in the store after
 * its jobs ran, and gone once it stopped. A real worker on every store.
 */
import assert from 'node:assert/strict'
import { hostname } from 'node:os'
import { describe, it } from 'node:test'

import { createClient, StoreUnavailableError, wrapStore } from '../../src/index.js'
import { MINUTE_MS } from '../../src/store/kernel/workers.js'
import type { ThroughputCount } from '../../src/store/store.js'
import { deferred, waitFor } from '../support/async.js'
import { tempStore } from '../support/sqlite-harness.js'
import { STORES, freshStore } from '../support/stores.js'
import { startWorker, stopWorker } from '../support/workers.js'

/** The counts of every queue, summed, over the minutes of the test. */
function totals(counts: readonly ThroughputCount[]): { completed: number; failed: number } {
  return counts.reduce(
    (sum, count) => ({ completed: sum.completed + count.completed, failed: sum.failed + count.failed }),
    { completed: 0, failed: 0 },
  )
}

for (const storeUnderTest of STORES) {
  describe(`the worker registry on ${storeUnderTest.name}`, { skip: storeUnderTest.skip }, () => {
    it('lists a worker from its start with the job it runs, counts its outcomes per minute, and drops it on stop', async (t) => {
      const harness = await freshStore(t, storeUnderTest)
      const { store } = harness
      const since = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS
      const release = deferred()
      const { worker } = await startWorker(t, {
        store: await harness.openPeer(),
        queues: ['mail', 'default'],
        concurrency: 3,
        heartbeatMs: 50,
        // A failed attempt waits a minute for its next: the test sees each failure once.
        backoff: { baseMs: 60_000 },
        handlers: {
          waits: async () => release.promise,
          works: async () => 'done',
          fails: async () => {
            throw new Error('boom')
          },
        },
      })

      const [listed] = await store.workers()
      assert.ok(listed !== undefined, 'listed at once, before any interval passed')
      assert.deepEqual(
        { ...listed, heartbeatAt: 0, startedAt: 0 },
        {
          workerId: worker.workerId,
          host: hostname(),
          pid: process.pid,
          queues: ['mail', 'default'],
          concurrency: 3,
          strategy: 'inline',
          startedAt: 0,
          jobs: [],
          activeCount: 0,
          heartbeatAt: 0,
        },
      )

      const client = createClient({ store })
      const { id: waitingId } = await client.enqueue('waits', {}, { queue: 'mail' })
      const running = await waitFor(
        async () => (await store.workers())[0]?.jobs.find((job) => job.id === waitingId),
        5000,
        'the waiting job in the worker record',
      )
      assert.equal(running.queue, 'mail')
      assert.equal(running.name, 'waits')
      assert.ok(Math.abs(running.startedAt - Date.now()) < 5000, 'its start is an epoch ms of now')

      await client.enqueue('works', {})
      await client.enqueue('works', {}, { queue: 'mail' })
      await client.enqueue('fails', {}, { maxAttempts: 1 })
      await client.enqueue('fails', {}, { maxAttempts: 3 })
      release.resolve()
      const counted = await waitFor(
        async () => {
          const counts = await store.throughput({ since })
          const sum = totals(counts)
          return sum.completed === 3 && sum.failed === 2 ? counts : null
        },
        5000,
        '3 completed and 2 failed in the throughput',
      )
      assert.deepEqual(
        [...new Set(counted.map((count) => count.queue))].sort(),
        ['default', 'mail'],
        'counted per queue',
      )
      assert.deepEqual(totals(counted.filter((count) => count.queue === 'mail')), { completed: 2, failed: 0 })

      await stopWorker(worker)
      assert.deepEqual(await store.workers(), [], 'gone once stopped')
      assert.deepEqual(totals(await store.throughput({ since })), { completed: 3, failed: 2 }, 'counted once')
    })
  })
}

it('sends the counts of heartbeats that failed with the next one that goes through', async (t) => {
  const { store, openPeer } = await tempStore(t)
  const since = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS
  let heartbeatsFail = false
  let failed = 0
  const flaky = wrapStore(await openPeer(), {
    around: (call) => {
      if (call.method !== 'heartbeat' || !heartbeatsFail) return call.next()
      failed++
      return Promise.reject(new StoreUnavailableError('the store is away'))
    },
  })
  const { worker, errors } = await startWorker(t, {
    store: flaky,
    heartbeatMs: 20,
    handlers: { works: async () => 'done' },
  })
  heartbeatsFail = true
  const client = createClient({ store })
  for (let i = 0; i < 4; i++) await client.enqueue('works', {})
  await waitFor(() => worker.counts.completed === 4 && failed >= 3, 5000, '4 jobs done, 3 heartbeats failed')
  assert.deepEqual(await store.throughput({ since }), [], 'nothing counted while heartbeats fail')
  heartbeatsFail = false
  await waitFor(
    async () => totals(await store.throughput({ since })).completed === 4,
    5000,
    'the 4 jobs counted once heartbeats go through',
  )
  assert.ok(errors.length >= 3, 'each failed heartbeat was reported')
  await stopWorker(worker)
  assert.deepEqual(totals(await store.throughput({ since })), { completed: 4, failed: 0 })
})
