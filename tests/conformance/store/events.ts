/**
 * What the job event log promises (docs/events.md): events of jobs moved through one store
 * instance reach a subscriber on another (as another process), in order, filtered as asked;
 * resumable from a cursor; a gap said, never silent. Writes go through publishJobEvents, the
 * seam every Ferry process opens its store with.
 * One area of the Store conformance suite (tests/conformance/store.case.ts runs them all).
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import { JobWaitError, ValidationError } from '../../../src/core/errors.js'
import type { JobError } from '../../../src/core/job.js'
import { publishJobEvents } from '../../../src/store/events/publish-events.js'
import {
  subscribe,
  type EventGap,
  type JobEventSubscription,
} from '../../../src/store/events/subscription.js'
import { eventChannelOf, type JobEvent } from '../../../src/store/events/job-event.js'
import { waitForJob } from '../../../src/client/wait-for.js'
import { within } from '../../support/async.js'
import { claimAt, completed, enqueueJob, enqueueJobs, one, type ConformanceCases } from './kit.js'

const WAIT_MS = 5000

async function nextEvents(
  subscription: JobEventSubscription,
  count: number,
): Promise<(JobEvent | EventGap)[]> {
  const events: (JobEvent | EventGap)[] = []
  while (events.length < count) {
    const item = await within(WAIT_MS, `event ${events.length + 1} of ${count}`, subscription.next())
    assert.ok(item !== null, 'the subscription ended early')
    events.push(item)
  }
  return events
}

function kinds(events: readonly (JobEvent | EventGap)[]): string[] {
  return events.map((event) => (event.type === 'gap' ? 'gap' : `${event.type}:${event.id}`))
}

const FAILURE: JobError = { kind: 'error', message: 'boom' }

export function eventsCases({ test: anyStoreTest }: ConformanceCases): void {
  // A store that keeps no job events refuses a subscription, so nobody waits on events that never come.
  const test: ConformanceCases['test'] = (title, body) =>
    anyStoreTest(title, async (h) => {
      if (eventChannelOf(h.store) !== null) return body(h)
      await assert.rejects(subscribe(h.store), (error: unknown) => error instanceof ValidationError)
    })

  describe('job events', () => {
    test('tells a subscriber on another store instance of enqueued, started and completed jobs', async (h) => {
      const peer = await h.openPeer()
      const subscription = await subscribe(peer)
      try {
        const store = publishJobEvents(h.store)
        const t = Date.now()
        const id = await enqueueJob(store, t, { queue: 'mail', name: 'send' })
        const job = one(
          await store.claim({ queues: ['mail'], limit: 1, leaseMs: 60_000, workerId: 'w', now: t }),
        )
        await store.settle({ settlements: [completed(job, { sent: 3 })] })
        const events = (await nextEvents(subscription, 3)) as JobEvent[]
        assert.deepEqual(kinds(events), [`enqueued:${id}`, `started:${id}`, `completed:${id}`])
        assert.deepEqual(
          events.map(({ queue, name }) => [queue, name]),
          [
            ['mail', 'send'],
            ['mail', 'send'],
            ['mail', 'send'],
          ],
        )
        assert.equal(events[1]!.attempt, 1)
        assert.deepEqual(events[2]!.result, { sent: 3 })
        assert.ok(events.every((event) => typeof event.at === 'number' && typeof event.cursor === 'string'))
      } finally {
        await subscription.close()
      }
    })

    test('tells of failed, dead, cancelled and retried jobs with their errors', async (h) => {
      const peer = await h.openPeer()
      const subscription = await subscribe(peer, { events: ['failed', 'dead', 'cancelled', 'retried'] })
      try {
        const store = publishJobEvents(h.store)
        const t = Date.now()
        const [a, b] = await enqueueJobs(store, t, [{}, {}])
        const claimed = await claimAt(store, t, { limit: 2 })
        const first = claimed.find((job) => job.id === a)!
        const second = claimed.find((job) => job.id === b)!
        await store.settle({
          settlements: [
            { kind: 'retry', id: first.id, leaseToken: first.leaseToken, runAt: t + 60_000, error: FAILURE },
            { kind: 'dead', id: second.id, leaseToken: second.leaseToken, error: FAILURE },
          ],
        })
        await store.retry({ ids: [b!] })
        await store.cancel({ ids: [a!] })
        const events = (await nextEvents(subscription, 4)) as JobEvent[]
        assert.deepEqual(kinds(events), [`failed:${a}`, `dead:${b}`, `retried:${b}`, `cancelled:${a}`])
        assert.deepEqual(events[0]!.error, FAILURE)
        assert.equal(events[0]!.runAt, t + 60_000)
        assert.deepEqual(events[1]!.error, FAILURE)
        assert.equal(events[3]!.error?.kind, 'cancelled')
      } finally {
        await subscription.close()
      }
    })

    test('tells of progress a renewal or a settlement took, before the outcome, and not of a lost lease', async (h) => {
      const peer = await h.openPeer()
      const subscription = await subscribe(peer, { events: ['progress', 'completed'] })
      try {
        const store = publishJobEvents(h.store)
        const t = Date.now()
        const [a, b] = await enqueueJobs(store, t, [{}, {}])
        const claimed = await claimAt(store, t, { limit: 2 })
        const first = claimed.find((job) => job.id === a)!
        const second = claimed.find((job) => job.id === b)!
        const renewed = await store.renew({
          leaseMs: 60_000,
          leases: [
            { id: first.id, leaseToken: first.leaseToken, report: { progress: '{"done":1}', logs: ['one'] } },
            { id: second.id, leaseToken: 'not-its-token', report: { progress: '7' } },
          ],
        })
        assert.deepEqual(renewed, ['ok', 'lease_lost'])
        await store.settle({
          settlements: [{ ...completed(first, null), report: { progress: '{"done":2}' } }],
        })
        const events = (await nextEvents(subscription, 3)) as JobEvent[]
        assert.deepEqual(kinds(events), [`progress:${a}`, `progress:${a}`, `completed:${a}`])
        assert.deepEqual(
          events.map((event) => event.progress),
          [{ done: 1 }, { done: 2 }, undefined],
        )
        assert.equal(events[0]!.queue, first.queue)
      } finally {
        await subscription.close()
      }
    })

    test('gives a subscriber only the queues, jobs and types it asked for', async (h) => {
      const peer = await h.openPeer()
      const store = publishJobEvents(h.store)
      const byQueue = await subscribe(peer, { queues: ['b'] })
      const byType = await subscribe(peer, { events: ['started'] })
      try {
        const t = Date.now()
        const [, inB] = await enqueueJobs(store, t, [{ queue: 'a' }, { queue: 'b' }])
        const byId = await subscribe(peer, { ids: [inB!] })
        try {
          const started = one(
            await store.claim({ queues: ['b'], limit: 1, leaseMs: 60_000, workerId: 'w', now: t }),
          )
          assert.equal(started.id, inB)
          assert.deepEqual(kinds(await nextEvents(byQueue, 2)), [`enqueued:${inB}`, `started:${inB}`])
          assert.deepEqual(kinds(await nextEvents(byType, 1)), [`started:${inB}`])
          // Its enqueued event may come too: events are written just after their call returns.
          let item = (await nextEvents(byId, 1))[0]!
          if (item.type === 'enqueued') item = (await nextEvents(byId, 1))[0]!
          assert.deepEqual(kinds([item]), [`started:${inB}`])
        } finally {
          await byId.close()
        }
      } finally {
        await byQueue.close()
        await byType.close()
      }
    })

    test('resumes after a cursor with the events that followed it', async (h) => {
      const peer = await h.openPeer()
      const store = publishJobEvents(h.store)
      const first = await subscribe(peer)
      try {
        const [a, b, c] = await enqueueJobs(store, Date.now(), [{}, {}, {}])
        const [eventA] = await nextEvents(first, 1)
        const resumed = await subscribe(peer, { cursor: eventA!.cursor })
        try {
          assert.deepEqual(kinds(await nextEvents(resumed, 2)), [`enqueued:${b}`, `enqueued:${c}`])
        } finally {
          await resumed.close()
        }
        assert.equal(kinds([eventA!])[0], `enqueued:${a}`)
      } finally {
        await first.close()
      }
    })

    test('says there is a gap when a cursor is from before a time nobody subscribed', async (h) => {
      const peer = await h.openPeer()
      const store = publishJobEvents(h.store)
      const first = await subscribe(peer)
      const [a] = await enqueueJobs(store, Date.now(), [{}])
      const [eventA] = await nextEvents(first, 1)
      assert.equal(kinds([eventA!])[0], `enqueued:${a}`)
      await first.close()
      // Nobody subscribes: this job's event is not kept.
      await enqueueJobs(store, Date.now(), [{}])
      const resumed = await subscribe(peer, { cursor: eventA!.cursor })
      try {
        // Events kept meanwhile may come first (a writer that still thought someone listened).
        let item = (await nextEvents(resumed, 1))[0]!
        while (item.type !== 'gap') {
          assert.equal(
            item.type,
            'enqueued',
            'only the event of the job enqueued meanwhile comes before the gap',
          )
          item = (await nextEvents(resumed, 1))[0]!
        }
        const [c] = await enqueueJobs(store, Date.now(), [{}])
        assert.deepEqual(kinds(await nextEvents(resumed, 1)), [`enqueued:${c}`], 'and goes on from the head')
      } finally {
        await resumed.close()
      }
    })

    test('writes no events while nobody subscribes', async (h) => {
      const peer = await h.openPeer()
      const store = publishJobEvents(h.store)
      await enqueueJobs(store, Date.now(), [{}, {}])
      const subscription = await subscribe(peer, { cursor: '0' })
      try {
        const [first] = await nextEvents(subscription, 1)
        assert.equal(first!.type, 'gap', 'a cursor from before any subscriber reads as a gap, not as events')
      } finally {
        await subscription.close()
      }
    })
  })

  describe('waitFor', () => {
    test('resolves with the result of a job that completes while it waits', async (h) => {
      const store = publishJobEvents(h.store)
      const peer = await h.openPeer()
      const id = await enqueueJob(store, Date.now())
      const waiting = waitForJob(peer, id, { timeoutMs: WAIT_MS })
      await new Promise((resolve) => setTimeout(resolve, 50))
      const job = one(await claimAt(store, Date.now()))
      await store.settle({ settlements: [completed(job, { answer: 42 })] })
      assert.deepEqual(await waiting, { answer: 42 })
    })

    test('resolves at once for a job that completed before the wait', async (h) => {
      const store = publishJobEvents(h.store)
      const id = await enqueueJob(store, Date.now())
      const job = one(await claimAt(store, Date.now()))
      await store.settle({ settlements: [completed(job, 'done')] })
      assert.equal(await waitForJob(store, id, { timeoutMs: WAIT_MS }), 'done')
    })

    test('rejects with job_dead and the job error when the job goes dead', async (h) => {
      const store = publishJobEvents(h.store)
      const id = await enqueueJob(store, Date.now())
      const waiting = waitForJob(store, id, { timeoutMs: WAIT_MS })
      const job = one(await claimAt(store, Date.now()))
      await store.settle({ settlements: [{ kind: 'dead', id, leaseToken: job.leaseToken, error: FAILURE }] })
      await assert.rejects(
        waiting,
        (error: unknown) =>
          error instanceof JobWaitError && error.code === 'job_dead' && error.jobError?.message === 'boom',
      )
    })

    test('rejects with job_cancelled when the job is cancelled', async (h) => {
      const store = publishJobEvents(h.store)
      const id = await enqueueJob(store, Date.now())
      const waiting = waitForJob(store, id, { timeoutMs: WAIT_MS })
      await new Promise((resolve) => setTimeout(resolve, 50))
      await store.cancel({ ids: [id] })
      await assert.rejects(
        waiting,
        (error: unknown) => error instanceof JobWaitError && error.code === 'job_cancelled',
      )
    })

    test('rejects with job_removed when the job is purged while it waits', async (h) => {
      const store = publishJobEvents(h.store)
      const id = await enqueueJob(store, Date.now())
      const waiting = waitForJob(store, id, { timeoutMs: WAIT_MS })
      await store.cancel({ ids: [id] })
      await store.purge({ state: 'dead' })
      await assert.rejects(
        waiting,
        (error: unknown) =>
          error instanceof JobWaitError && (error.code === 'job_removed' || error.code === 'job_cancelled'),
      )
      await assert.rejects(
        waitForJob(store, id, { timeoutMs: WAIT_MS }),
        (error: unknown) => error instanceof JobWaitError && error.code === 'job_removed',
      )
    })

    test('rejects with wait_timeout when the job does not finish in time', async (h) => {
      const store = publishJobEvents(h.store)
      const id = await enqueueJob(store, Date.now())
      await assert.rejects(
        waitForJob(store, id, { timeoutMs: 100 }),
        (error: unknown) => error instanceof JobWaitError && error.code === 'wait_timeout',
      )
    })

    test('rejects with wait_aborted when its signal aborts', async (h) => {
      const store = publishJobEvents(h.store)
      const id = await enqueueJob(store, Date.now())
      const controller = new AbortController()
      const waiting = waitForJob(store, id, { signal: controller.signal })
      setTimeout(() => controller.abort(), 50)
      await assert.rejects(
        waiting,
        (error: unknown) => error instanceof JobWaitError && error.code === 'wait_aborted',
      )
    })
  })
}
