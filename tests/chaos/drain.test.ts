/**
 * The chaos run's drain (chaos/supervisor.ts untilDrained) on a real SQLite store: it waits for
 * as long as jobs keep finishing, and fails once none has finished for a while.
 */
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { test } from 'node:test'

import { untilDrained } from '../../chaos/supervisor.js'
import { createClient } from '../../src/index.js'
import { tempDatabase } from '../support/sqlite-harness.js'

const NO_PROGRESS_MS = 300

test('a job nobody runs stops the drain once none finishes for a while, and is counted as left', async (t) => {
  const store = await tempDatabase(t).open()
  await createClient({ store }).enqueue('chaos-sleep', {}, { queue: 'default' })
  assert.deepEqual(await untilDrained(store, () => true, NO_PROGRESS_MS), { drained: false, left: 1 })
})

test('the drain lasts past that limit while jobs keep finishing', async (t) => {
  const store = await tempDatabase(t).open()
  const client = createClient({ store })
  const jobs = 6
  for (let i = 0; i < jobs; i++) await client.enqueue('chaos-sleep', {}, { queue: 'bulk' })
  // One job every 100 ms: 600 ms in all, twice the limit.
  const worker = (async () => {
    for (let i = 0; i < jobs; i++) {
      await sleep(100)
      const [job] = await store.claim({ queues: ['bulk'], limit: 1, leaseMs: 10_000, workerId: 'w' })
      await store.settle({ settlements: [{ kind: 'completed', id: job!.id, leaseToken: job!.leaseToken }] })
    }
  })()
  assert.deepEqual(await untilDrained(store, () => true, NO_PROGRESS_MS), { drained: true, left: 0 })
  await worker
})

test('empty queues are not drained while a producer has not finished', async (t) => {
  const store = await tempDatabase(t).open()
  assert.deepEqual(await untilDrained(store, () => false, NO_PROGRESS_MS), { drained: false, left: 0 })
})

test('jobs of other queues are not the chaos run’s', async (t) => {
  const store = await tempDatabase(t).open()
  await createClient({ store }).enqueue('other', {}, { queue: 'elsewhere' })
  assert.deepEqual(await untilDrained(store, () => true, NO_PROGRESS_MS), { drained: true, left: 0 })
})
