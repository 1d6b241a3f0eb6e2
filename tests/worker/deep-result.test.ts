/**
 * A handler's result goes through the payload validator before it is stored: one nested past
 * MAX_PAYLOAD_DEPTH must end its job dead with a message that says so (it overflowed the stack of
 * the recursive validator before; under threads the result was lost on its way to the worker and
 * the job stayed active), under every strategy, and the worker must go on with the next job.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { createClient } from '../../src/index.js'
import { waitForEvent } from '../support/async.js'
import { tempStore } from '../support/sqlite-harness.js'
import { getExistingJob } from '../support/store-calls.js'
import { createWorker, fixtureHandlers } from '../support/workers.js'

for (const strategy of ['inline', 'threads', 'processes', 'fork'] as const) {
  test(`${strategy}: a result nested 5,000 deep ends its job dead saying it is nested too deep, and the next job runs`, async (t) => {
    const { store } = await tempStore(t)
    const client = createClient({ store })
    const { id: deepId } = await client.enqueue('deep-result', { levels: 5_000 })
    const { id: fineId } = await client.enqueue('deep-result', { levels: 3 })
    const { worker, errors } = createWorker(t, {
      store,
      handlers: fixtureHandlers('deep-result.mjs'),
      concurrency: 1,
      strategy,
    })
    const dead = waitForEvent(worker, 'job:dead', (job) => job.id === deepId)
    const completed = waitForEvent(worker, 'job:completed', (job) => job.id === fineId)
    await worker.start()
    await Promise.all([dead, completed])

    const deep = await getExistingJob(store, deepId)
    assert.equal(deep.state, 'dead')
    assert.equal(deep.lastError?.kind, 'permanent')
    assert.match(deep.lastError?.message ?? '', /result: is nested more than 1000 levels deep/)
    assert.deepEqual((await getExistingJob(store, fineId)).result, [[[null]]])
    assert.deepEqual(errors, [])
  })
}
