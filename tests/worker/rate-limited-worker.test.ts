/**
 * A worker on a rate-limited queue keeps going window after window, on every store: each time its
 * claims find the window full (or fill it themselves), it sleeps until the window opens, then
 * claims again, with nothing else to wake it (no enqueue, no other worker).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import { createClient, type JobSpec } from '../../src/index.js'
import { waitFor } from '../support/async.js'
import { freshStore, STORES } from '../support/stores.js'
import { createWorker, stopWorker } from '../support/workers.js'

const JOBS = 3000

for (const store of STORES) {
  describe(`a rate-limited worker on ${store.name}`, { skip: store.skip }, () => {
    it('runs every job, window after window, with nothing to wake it but the windows', async (t) => {
      const harness = await freshStore(t, store)
      // 1,000 starts a 500 ms window: the 3,000 jobs take 3 windows, about 1.5 s, and the claims that
      // fill the later windows come as earlier starts leave them, a few at a time.
      await harness.store.control({ limit: { queue: 'default', rate: { limit: 1000, perMs: 500 } } })
      const specs: JobSpec[] = Array.from({ length: JOBS }, () => ({ name: 'noop', payload: null }))
      await createClient({ store: harness.store }).enqueueMany(specs)
      const { worker, errors } = createWorker(t, {
        store: harness.store,
        concurrency: 10,
        handlers: { noop: async () => {} },
      })
      await worker.start()
      // A worker that missed a window's opening would wait here until the test's end.
      await waitFor(
        async () => (await harness.store.stats()).find((s) => s.queue === 'default')?.completed === JOBS,
        20_000,
        'every job completed',
      )
      await stopWorker(worker)
      assert.deepEqual(errors, [])
    })
  })
}
