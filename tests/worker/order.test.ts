/**
 * The order jobs run in, end to end through a real worker on a real SQLite file: strictly by the
 * worker's queue list, then priority (higher first), then enqueue order.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { createClient, type JobSpec } from '../../src/index.js'
import { deferred, sleep, waitForEvent, within } from '../support/async.js'
import { tempStore } from '../support/sqlite-harness.js'
import { getExistingJob } from '../support/store-calls.js'
import { createWorker, startWorker, stopWorker } from '../support/workers.js'

const QUEUES = ['urgent', 'normal', 'later']

interface Spec {
  label: string
  queue: string
  priority: number
}

/** A mix enqueued out of order: the low queue first, ties of priority, negative priorities. */
const MIX: Spec[] = [
  { label: 'later-a', queue: 'later', priority: 0 },
  { label: 'normal-a', queue: 'normal', priority: 0 },
  { label: 'urgent-a', queue: 'urgent', priority: 0 },
  { label: 'later-b', queue: 'later', priority: 5 },
  { label: 'normal-b', queue: 'normal', priority: 10 },
  { label: 'urgent-b', queue: 'urgent', priority: -1 },
  { label: 'normal-c', queue: 'normal', priority: 10 },
  { label: 'urgent-c', queue: 'urgent', priority: 3 },
  { label: 'later-c', queue: 'later', priority: 5 },
  { label: 'normal-d', queue: 'normal', priority: -7 },
  { label: 'urgent-d', queue: 'urgent', priority: 3 },
  { label: 'later-d', queue: 'later', priority: 0 },
  { label: 'normal-e', queue: 'normal', priority: 0 },
]

/** What the order must be: queue position, then priority descending, then enqueue position. */
function expectedOrder(specs: Spec[]): string[] {
  return specs
    .map((spec, index) => ({ ...spec, index }))
    .sort(
      (a, b) =>
        QUEUES.indexOf(a.queue) - QUEUES.indexOf(b.queue) || b.priority - a.priority || a.index - b.index,
    )
    .map((spec) => spec.label)
}

test('a worker with concurrency 1 runs jobs by queue order, then priority, then enqueue order', async (t) => {
  const { store } = await tempStore(t)
  const client = createClient({ store })
  // One at a time, so each job has its own enqueue time too (runAt breaks ties before id).
  for (const spec of MIX) {
    await client.enqueue('record', { label: spec.label }, { queue: spec.queue, priority: spec.priority })
  }
  // A job on a queue the worker does not watch is never taken.
  const { id: otherId } = await client.enqueue('record', { label: 'other' }, { queue: 'other', priority: 99 })

  const ran: string[] = []
  const allDone = deferred()
  const { worker, errors } = await startWorker(t, {
    store,
    queues: QUEUES,
    concurrency: 1,
    handlers: {
      record: ({ label }: { label: string }) => {
        ran.push(label)
        if (ran.length === MIX.length) allDone.resolve()
        return label
      },
    },
  })
  await within(5000, 'running every job', allDone.promise)
  await stopWorker(worker)

  assert.deepEqual(ran, expectedOrder(MIX))
  assert.equal(worker.counts.completed, MIX.length)
  assert.equal((await getExistingJob(store, otherId)).state, 'ready')
  assert.deepEqual(errors, [])
})

test('jobs enqueued in one batch run in the same order, and a wider claim keeps that order', async (t) => {
  const { store } = await tempStore(t)
  const client = createClient({ store })
  const batch: JobSpec[] = MIX.map((spec) => ({
    name: 'record',
    payload: { label: spec.label },
    options: { queue: spec.queue, priority: spec.priority },
  }))
  await client.enqueueMany(batch)

  // Concurrency 4: one claim takes several jobs; they must be handed out in claim order.
  const claimed: string[] = []
  const { worker, errors } = createWorker(t, {
    store,
    queues: QUEUES,
    concurrency: 4,
    handlers: { record: () => null },
  })
  worker.on('job:claimed', (job) => claimed.push((job.payload as { label: string }).label))
  const allCompleted = waitForEvent(worker, 'job:completed', () => worker.counts.completed === MIX.length)
  await worker.start()
  await allCompleted
  await stopWorker(worker)

  assert.deepEqual(claimed, expectedOrder(MIX))
  assert.deepEqual(errors, [])
})

test('a worker never runs more handlers at once than its concurrency, and keeps every slot busy', async (t) => {
  const { store } = await tempStore(t)
  const count = 40
  await createClient({ store }).enqueueMany(
    Array.from({ length: count }, (_, i): JobSpec => ({ name: 'busy', payload: { i } })),
  )
  let inFlight = 0
  let maxInFlight = 0
  const { worker, errors } = createWorker(t, {
    store,
    concurrency: 4,
    handlers: {
      busy: async ({ i }: { i: number }) => {
        maxInFlight = Math.max(maxInFlight, ++inFlight)
        await sleep(1 + ((i * 7) % 10))
        inFlight--
      },
    },
  })
  const allCompleted = waitForEvent(worker, 'job:completed', () => worker.counts.completed === count)
  await worker.start()
  await allCompleted
  await stopWorker(worker)

  assert.equal(maxInFlight, 4)
  assert.equal(worker.counts.claimed, count)
  assert.deepEqual(errors, [])
})
