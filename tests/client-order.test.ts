/**
 * Group commit on every store: a tick's enqueues may be cut into several store calls (Redis
 * pipelines pieces of 1,000: capabilities.enqueueBatch), yet ids follow the order the jobs were
 * enqueued in, the claims take them in that order, and one enqueueMany stays whole.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import { createClient } from '../src/index.js'
import { freshStore, STORES } from './support/stores.js'
import { compareIds } from './support/store-harness.js'

const JOBS = 2600

for (const store of STORES) {
  describe(`group commit on ${store.name}`, { skip: store.skip }, () => {
    it(`gives ${JOBS.toLocaleString('en-US')} enqueues of one tick ids in enqueue order, claimed in that order`, async (t) => {
      const harness = await freshStore(t, store)
      const client = createClient({ store: harness.store })
      const results = await Promise.all(
        Array.from({ length: JOBS }, (_, seq) => client.enqueue('order.job', { seq })),
      )
      const ids = results.map((result) => result.id)
      assert.deepEqual([...ids].sort(compareIds), ids, 'ids follow the enqueue order')
      const claimed = await harness.store.claim({
        queues: ['default'],
        limit: JOBS,
        leaseMs: 60_000,
        workerId: 'w',
      })
      assert.deepEqual(
        claimed.map((job) => (job.payload as { seq: number }).seq),
        Array.from({ length: JOBS }, (_, seq) => seq),
      )
    })

    it('keeps an enqueueMany larger than a store call whole, between the enqueues around it', async (t) => {
      const harness = await freshStore(t, store)
      const client = createClient({ store: harness.store })
      const before = client.enqueue('order.job', { seq: 'before' })
      const many = client.enqueueMany(
        Array.from({ length: 1500 }, (_, seq) => ({ name: 'order.job', payload: { seq } })),
      )
      const after = client.enqueue('order.job', { seq: 'after' })
      const ids = [(await before).id, ...(await many).map((result) => result.id), (await after).id]
      assert.deepEqual([...ids].sort(compareIds), ids)
      assert.equal(new Set(ids).size, 1502)
    })
  })
}
