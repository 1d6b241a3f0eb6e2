/**
 * Group commit with large payloads, on every store: a tick's worth of enqueues is cut into store
 * calls by bytes as well as by count (capabilities.enqueueBatch.maxBytes), so 600 concurrent
 * enqueues of 1 MiB each all go through (on Redis they used to fail together with "Invalid string
 * length": ioredis builds each command as one string, and one script carried all 600). One
 * enqueueMany cannot be cut without ending its atomicity: past what the store can take in one
 * call (maxCallBytes) it is refused before anything is written.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import { createClient } from '../src/client/client.js'
import { DEFAULT_MAX_PAYLOAD_BYTES } from '../src/core/job.js'
import { ValidationError } from '../src/core/errors.js'
import { wrapStore } from '../src/store/wrap-store.js'
import { STORES, freshStore } from './support/stores.js'
import { defer } from './support/cleanup.js'
import { getJob } from './support/store-calls.js'

const CONCURRENT = 600
/** A payload whose JSON is exactly the largest the client accepts by default: 1 MiB. */
const LARGEST = 'x'.repeat(DEFAULT_MAX_PAYLOAD_BYTES - 2)

for (const storeUnderTest of STORES) {
  describe(`large payloads on ${storeUnderTest.name}`, { skip: storeUnderTest.skip }, () => {
    it(`${CONCURRENT} concurrent enqueues of 1 MiB payloads all resolve and are stored`, async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      const client = createClient({ store })
      defer(t, () => client.close())
      const results = await Promise.all(
        Array.from({ length: CONCURRENT }, () => client.enqueue('large.job', LARGEST, { queue: 'large' })),
      )
      assert.equal(new Set(results.map((result) => result.id)).size, CONCURRENT)
      assert.ok(results.every((result) => result.created))
      const [stats] = await store.stats()
      assert.equal(stats?.queue, 'large')
      assert.equal(stats?.ready, CONCURRENT)
      for (const { id } of [results[0]!, results[CONCURRENT - 1]!]) {
        assert.equal((await getJob(store, id))?.payload, LARGEST, `job ${id} is stored whole`)
      }
    })

    if (storeUnderTest.name === 'sqlite') {
      // One file, one process: nothing between the client and the database limits a call's size.
      it('an enqueueMany of 40 MiB, more than a server store carries in one batch, is taken whole in one store call', async (t) => {
        const { store } = await freshStore(t, storeUnderTest)
        assert.equal(store.capabilities.enqueueBatch.maxCallBytes, Infinity)
        let calls = 0
        const counted = wrapStore(store, {
          around: (call) => {
            if (call.method === 'enqueue') calls++
            return call.next()
          },
        })
        const client = createClient({ store: counted })
        defer(t, () => client.close())
        const COUNT = 40
        const jobs = Array.from({ length: COUNT }, () => ({ name: 'large.job', payload: LARGEST }))
        const results = await client.enqueueMany(jobs)
        assert.equal(calls, 1)
        assert.equal(results.length, COUNT)
        assert.equal((await store.stats())[0]?.ready, COUNT)
      })
      return
    }

    it('an enqueueMany over what the store takes in one call is refused with a ValidationError, writing nothing', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      const { maxCallBytes } = store.capabilities.enqueueBatch
      assert.ok(Number.isFinite(maxCallBytes), `${storeUnderTest.name} has a per-call limit`)
      const client = createClient({ store })
      defer(t, () => client.close())
      const count = Math.ceil(maxCallBytes / DEFAULT_MAX_PAYLOAD_BYTES) + 1
      const jobs = Array.from({ length: count }, () => ({ name: 'large.job', payload: LARGEST }))
      await assert.rejects(client.enqueueMany(jobs), (error: unknown) => {
        assert.ok(error instanceof ValidationError, String(error))
        assert.equal(error.code, 'payload_too_large')
        assert.equal(error.field, 'jobs')
        assert.match(error.message, /smaller batches/)
        return true
      })
      assert.deepEqual(await store.stats(), [])
      // The same jobs in a batch the store can take go through: the refusal is about size only.
      await client.enqueueMany(jobs.slice(0, 2))
      assert.equal((await store.stats())[0]?.ready, 2)
    })
  })
}
