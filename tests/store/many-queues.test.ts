/**
 * A worker may listen to any number of queues: every store claims across 10,000 of them in one
 * call, in the order given. (Redis used to fail past about 8,000: claim.lua passed the whole list
 * to one SMISMEMBER through unpack(), beyond what Lua's C stack holds.)
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import { STORES, freshStore } from '../support/stores.js'
import { newJob } from '../support/store-harness.js'
import { within } from '../support/async.js'
import { waitReason } from '../support/store-calls.js'

const QUEUE_COUNT = 10_000
const LEASE = { leaseMs: 60_000, workerId: 'many-queues' }
const queues = Array.from({ length: QUEUE_COUNT }, (_, i) => `q${i}`)

for (const storeUnderTest of STORES) {
  describe(`${QUEUE_COUNT} queues on ${storeUnderTest.name}`, { skip: storeUnderTest.skip }, () => {
    it('claims across all of them in one call, in queue order, then priority', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      // Enqueued in an order unlike the queues': the claim must follow the queue list.
      const enqueued = await store.enqueue({
        jobs: [
          newJob({ queue: 'q9999', payload: '"last"' }),
          newJob({ queue: 'q5000', payload: '"middle, low"' }),
          newJob({ queue: 'q9998', payload: '"next to last"' }),
          newJob({ queue: 'q5000', payload: '"middle, high"', priority: 5 }),
          newJob({ queue: 'q7', payload: '"early"' }),
          newJob({ queue: 'elsewhere', payload: '"not listed"' }),
        ],
      })
      assert.ok(enqueued.every((result) => result.created))
      const claimed = await store.claim({ queues, limit: 4, ...LEASE })
      assert.deepEqual(
        claimed.map((job) => [job.queue, job.payload]),
        [
          ['q7', 'early'],
          ['q5000', 'middle, high'],
          ['q5000', 'middle, low'],
          ['q9998', 'next to last'],
        ],
      )
      const { settled, claimed: rest } = await store.settle({
        settlements: claimed.map((job) => ({ kind: 'completed', id: job.id, leaseToken: job.leaseToken })),
        claim: { queues, limit: 10, ...LEASE },
      })
      assert.deepEqual(settled, ['ok', 'ok', 'ok', 'ok'])
      assert.deepEqual(
        rest.map((job) => [job.queue, job.payload]),
        [['q9999', 'last']],
      )
      assert.deepEqual(await store.claim({ queues, limit: 10, ...LEASE }), [])
    })

    it('wakes a waiter on all of them when a job is enqueued on the last', async (t) => {
      const harness = await freshStore(t, storeUnderTest)
      const producer = await harness.openPeer()
      const waiting = waitReason(harness.store, { queues, timeoutMs: 10_000 })
      await producer.enqueue({ jobs: [newJob({ queue: queues[QUEUE_COUNT - 1]! })] })
      assert.equal(await within(10_000, 'the wait', waiting), 'notified')
    })
  })
}
