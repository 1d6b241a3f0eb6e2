/**
 * What queue control promises: pause and resume, and a queue's concurrency limit, kept by the
 * store and enforced inside the claim (and a delivery to a waiter), in every process at once.
 * One area of the Store conformance suite (tests/conformance/store.case.ts runs them all).
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import { ValidationError } from '../../../src/core/errors.js'
import type { ControlParams, QueueControl, Store } from '../../../src/store/store.js'
import { within } from '../../support/async.js'
import { waitReason } from '../../support/store-calls.js'
import {
  SECOND,
  MINUTE,
  HOUR,
  LEASE_MS,
  enqueueJobs,
  enqueueJob,
  claimAt,
  completed,
  deliveredOnEnqueue,
  getExisting,
  ids,
  type ConformanceCases,
} from './kit.js'

/** The record's entry for a queue, or undefined when the queue has no setting. */
async function settingsOf(store: Store, queue: string): Promise<QueueControl | undefined> {
  return (await store.control()).queues.find((entry) => entry.queue === queue)
}

const NO_LIMITS = { concurrency: null, rate: null, groupConcurrency: null, groupRate: null }
const NO_RETENTION = { completedMs: null, deadMs: null, completedCount: null, deadCount: null }

export function queueControlCases({ test, deliveryTest }: ConformanceCases): void {
  describe('queue control: pause and resume', () => {
    test('keeps a pause with when, by whom and why, and forgets it on resume', async ({ store }) => {
      const t = Date.now()
      assert.deepEqual((await store.control()).queues, [])
      const record = await store.control({
        pause: { queue: 'mail', reason: 'provider down', by: 'ops' },
        now: t,
      })
      const paused: QueueControl = {
        queue: 'mail',
        paused: { at: t, by: 'ops', reason: 'provider down' },
        limits: NO_LIMITS,
        retention: NO_RETENTION,
      }
      assert.deepEqual(record.queues, [paused], 'the answer is the record as the change left it')
      assert.deepEqual((await store.control()).queues, [paused])
      // Paused again: the latest pause is the one on record.
      await store.control({ pause: { queue: 'mail' }, now: t + SECOND })
      assert.deepEqual(await settingsOf(store, 'mail'), {
        queue: 'mail',
        paused: { at: t + SECOND, by: null, reason: null },
        limits: NO_LIMITS,
        retention: NO_RETENTION,
      })
      await store.control({ pause: { queue: 'a-first' }, now: t })
      assert.deepEqual(
        (await store.control()).queues.map((entry) => entry.queue),
        ['a-first', 'mail'],
        'listed by name',
      )
      assert.deepEqual(
        (await store.control({ resume: { queue: 'mail' } })).queues.map((q) => q.queue),
        ['a-first'],
      )
      // Resuming a queue that runs changes nothing.
      await store.control({ resume: { queue: 'never-paused' } })
      assert.deepEqual(
        (await store.control()).queues.map((q) => q.queue),
        ['a-first'],
      )
      assert.equal((await store.control()).stopRequestedAt, null, 'a pause is not a stop request')
    })

    test("claims none of a paused queue's jobs, ready or coming due, and all of them once resumed", async ({
      store,
    }) => {
      const t = Date.now()
      const [ready, later] = await enqueueJobs(store, t, [{}, { delayMs: MINUTE }])
      await store.control({ pause: { queue: 'default' }, now: t })
      assert.deepEqual(await claimAt(store, t), [])
      assert.deepEqual(await claimAt(store, t + HOUR), [], 'not when its scheduled job comes due either')
      await store.control({ resume: { queue: 'default' } })
      assert.deepEqual(ids(await claimAt(store, t + HOUR)), [ready, later], 'in claim order')
    })

    test('falls through a paused queue to the next queue of the list, in order', async ({ store }) => {
      const t = Date.now()
      const [, low1, , low2] = await enqueueJobs(store, t, [
        { queue: 'high' },
        { queue: 'low' },
        { queue: 'high' },
        { queue: 'low' },
      ])
      await store.control({ pause: { queue: 'high' }, now: t })
      const claimed = await claimAt(store, t, { queues: ['high', 'low'], limit: 10 })
      assert.deepEqual(ids(claimed), [low1, low2])
    })

    test('a paused queue gives nothing to the claim a settlement carries', async ({ store }) => {
      const t = Date.now()
      const first = await enqueueJob(store, t, { queue: 'work' })
      const [job] = await claimAt(store, t, { queues: ['work'] }, first)
      const [, other] = await enqueueJobs(store, t, [{ queue: 'work' }, { queue: 'other' }])
      await store.control({ pause: { queue: 'work' }, now: t })
      const { settled, claimed } = await store.settle({
        settlements: [completed(job)],
        claim: { queues: ['work', 'other'], limit: 10, leaseMs: LEASE_MS, workerId: 'worker-1' },
        now: t,
      })
      assert.deepEqual(settled, ['ok'], "the paused queue's active job still settles")
      assert.deepEqual(ids(claimed), [other])
    })

    test('a pause made through another store instance holds for every claim from its commit', async (h) => {
      const peer = await h.openPeer()
      const t = Date.now()
      await enqueueJobs(h.store, t, [{}, {}])
      await peer.control({ pause: { queue: 'default', by: 'peer' }, now: t })
      assert.deepEqual(await claimAt(h.store, t), [])
      assert.equal((await settingsOf(h.store, 'default'))?.paused?.by, 'peer')
    })

    test('resume through another store instance wakes a worker waiting for the queue', async (h) => {
      const peer = await h.openPeer()
      const t = Date.now()
      await enqueueJob(h.store, t)
      await h.store.control({ pause: { queue: 'default' }, now: t })
      assert.deepEqual(await claimAt(h.store, t), [])
      const waiting = waitReason(h.store, { queues: ['default'], timeoutMs: 3 * SECOND })
      await new Promise((resolve) => setTimeout(resolve, 50))
      await peer.control({ resume: { queue: 'default' } })
      assert.equal(await within(4 * SECOND, 'waitForWork', waiting), 'notified')
      assert.equal((await claimAt(h.store, Date.now())).length, 1)
    })

    test('resume through the same store wakes a worker waiting for the queue', async ({ store }) => {
      const t = Date.now()
      await enqueueJob(store, t)
      await store.control({ pause: { queue: 'default' }, now: t })
      const waiting = waitReason(store, { queues: ['default'], timeoutMs: 3 * SECOND })
      await store.control({ resume: { queue: 'default' } })
      assert.equal(await within(4 * SECOND, 'waitForWork', waiting), 'notified')
    })

    test('a waiter is not woken, again and again, by ready jobs of its paused queue', async ({ store }) => {
      const t = Date.now()
      await enqueueJobs(store, t, [{}, {}])
      await store.control({ pause: { queue: 'default' }, now: t })
      assert.equal(await waitReason(store, { queues: ['default'], timeoutMs: 300 }), 'timeout')
    })

    deliveryTest('an enqueue hands a waiter no job of a paused queue', async (h, waitForJobs) => {
      const peer = await h.openPeer()
      const t = Date.now()
      await h.store.control({ pause: { queue: 'default' }, now: t })
      const claim = { limit: 5, leaseMs: LEASE_MS, workerId: 'waiter' }
      const waiting = waitForJobs({ queues: ['default', 'other'], timeoutMs: 800, claim })
      await new Promise((resolve) => setTimeout(resolve, 100))
      const [paused] = await enqueueJobs(peer, Date.now(), [{ queue: 'default' }])
      const wake = await within(3 * SECOND, 'waitForJobs', waiting)
      assert.deepEqual(wake.jobs, [], 'nothing of the paused queue delivered')
      const [other] = await enqueueJobs(peer, Date.now(), [{ queue: 'other' }])
      const claimed = await claimAt(h.store, Date.now(), { queues: ['default', 'other'] })
      assert.deepEqual(ids(claimed), [other])
      await h.store.control({ resume: { queue: 'default' } })
      assert.deepEqual(ids(await claimAt(h.store, Date.now())), [paused])
    })
  })

  describe('queue control: concurrency limit', () => {
    test('keeps a limit, changes it field by field, and clears it', async ({ store }) => {
      const record = await store.control({ limit: { queue: 'api', concurrency: 5 } })
      assert.deepEqual(record.queues, [
        { queue: 'api', paused: null, limits: { ...NO_LIMITS, concurrency: 5 }, retention: NO_RETENTION },
      ])
      await store.control({ pause: { queue: 'api' }, now: 1000 })
      await store.control({ limit: { queue: 'api', concurrency: 2 } })
      assert.deepEqual(await settingsOf(store, 'api'), {
        queue: 'api',
        paused: { at: 1000, by: null, reason: null },
        limits: { ...NO_LIMITS, concurrency: 2 },
        retention: NO_RETENTION,
      })
      await store.control({ resume: { queue: 'api' } })
      assert.deepEqual(await settingsOf(store, 'api'), {
        queue: 'api',
        paused: null,
        limits: { ...NO_LIMITS, concurrency: 2 },
        retention: NO_RETENTION,
      })
      await store.control({ limit: { queue: 'api', concurrency: null } })
      assert.equal(await settingsOf(store, 'api'), undefined, 'a queue without settings is not listed')
      await store.control({ limit: { queue: 'api', concurrency: 3 } })
      await store.control({ limit: { queue: 'api', clear: true } })
      assert.deepEqual((await store.control()).queues, [])
    })

    test('claims no more than the limit leaves room for, counting live leases across workers', async ({
      store,
    }) => {
      const t = Date.now()
      const jobs = await enqueueJobs(store, t, [{}, {}, {}, {}, {}])
      await store.control({ limit: { queue: 'default', concurrency: 2 } })
      const first = await claimAt(store, t, { limit: 10, workerId: 'a' })
      assert.deepEqual(ids(first), jobs.slice(0, 2))
      assert.deepEqual(await claimAt(store, t, { limit: 10, workerId: 'b' }), [], 'at the limit')
      assert.deepEqual((await store.settle({ settlements: [completed(first[0])], now: t })).settled, ['ok'])
      assert.deepEqual(ids(await claimAt(store, t, { limit: 10, workerId: 'b' })), [jobs[2]])
      // A lease that ran out no longer counts: its worker is gone as far as the store can tell.
      const afterLease = t + LEASE_MS + 1
      assert.deepEqual(ids(await claimAt(store, afterLease, { limit: 10, workerId: 'c' })), jobs.slice(3, 5))
    })

    test('a limited queue falls through to the next queue of the list', async ({ store }) => {
      const t = Date.now()
      const [h1, h2, l1] = await enqueueJobs(store, t, [
        { queue: 'high' },
        { queue: 'high' },
        { queue: 'low' },
      ])
      await store.control({ limit: { queue: 'high', concurrency: 1 } })
      assert.deepEqual(ids(await claimAt(store, t, { queues: ['high', 'low'], limit: 10 })), [h1, l1])
      assert.deepEqual(await claimAt(store, t, { queues: ['high'], limit: 10 }), [])
      assert.ok(h2)
    })

    test('the claim a settlement carries sees the room the settlement made', async ({ store }) => {
      const t = Date.now()
      const [a, b] = await enqueueJobs(store, t, [{}, {}])
      await store.control({ limit: { queue: 'default', concurrency: 1 } })
      const [job] = await claimAt(store, t, { limit: 10 }, a)
      const { claimed } = await store.settle({
        settlements: [completed(job)],
        claim: { queues: ['default'], limit: 10, leaseMs: LEASE_MS, workerId: 'worker-1' },
        now: t,
      })
      assert.deepEqual(ids(claimed), [b])
    })

    test('a lower limit takes no running job away, and holds new claims until they are under it', async ({
      store,
    }) => {
      const t = Date.now()
      const jobs = await enqueueJobs(store, t, [{}, {}, {}, {}])
      const running = await claimAt(store, t, { limit: 3 })
      await store.control({ limit: { queue: 'default', concurrency: 2 } })
      assert.deepEqual(await claimAt(store, t), [])
      await store.settle({ settlements: [completed(running[0]), completed(running[1])], now: t })
      assert.deepEqual(ids(await claimAt(store, t)), [jobs[3]])
    })

    test('settling a job of a limited queue wakes a worker waiting through another instance', async (h) => {
      const peer = await h.openPeer()
      const t = Date.now()
      await enqueueJobs(h.store, t, [{}, {}])
      await h.store.control({ limit: { queue: 'default', concurrency: 1 } })
      const [job] = await claimAt(peer, t, { workerId: 'peer' })
      assert.deepEqual(await claimAt(h.store, t), [], 'at the limit')
      const waiting = waitReason(h.store, { queues: ['default'], timeoutMs: 3 * SECOND })
      await new Promise((resolve) => setTimeout(resolve, 50))
      await peer.settle({ settlements: [completed(job)] })
      assert.equal(await within(4 * SECOND, 'waitForWork', waiting), 'notified')
      assert.equal((await claimAt(h.store, Date.now())).length, 1)
    })

    deliveryTest(
      'an enqueue hands a waiter no more than the limit leaves room for',
      async (h, waitForJobs) => {
        const peer = await h.openPeer()
        const t = Date.now()
        await h.store.control({ limit: { queue: 'default', concurrency: 2 } })
        await enqueueJob(h.store, t)
        const [held] = await claimAt(h.store, t, { workerId: 'holder' })
        assert.ok(held)
        const wake = await deliveredOnEnqueue(h, peer, waitForJobs, 3)
        assert.equal(wake.jobs.length, 1, 'one slot was left under the limit')
        assert.deepEqual(await claimAt(h.store, Date.now(), { workerId: 'other' }), [])
      },
    )
  })

  describe('start deadlines', () => {
    test('a job not started by its deadline is never claimed, and ends dead with cause expired', async ({
      store,
    }) => {
      const t = Date.now()
      const [expiring, plain, later] = await enqueueJobs(store, t, [
        { expiresInMs: MINUTE },
        {},
        { expiresAt: t + HOUR },
      ])
      const at = t + MINUTE
      assert.deepEqual(ids(await claimAt(store, at)), [plain, later], 'the expired job is passed over')
      const job = await getExisting(store, expiring!)
      assert.equal(job.state, 'dead')
      assert.equal(job.attempts, 0, 'never run')
      assert.equal(job.expiresAt, t + MINUTE)
      assert.equal(job.finishedAt, at)
      assert.equal(job.lastError?.kind, 'expired')
      assert.equal((await getExisting(store, later!)).expiresAt, t + HOUR, 'an absolute deadline')
      const [stats] = await store.stats({ now: at })
      assert.equal(stats?.dead, 1)
      assert.equal(stats?.expired, 1, 'counted in stats')
    })

    test('a job claimed before its deadline runs, and settles, whenever it finishes', async ({ store }) => {
      const t = Date.now()
      const id = await enqueueJob(store, t, { expiresInMs: SECOND })
      const [job] = await claimAt(store, t, {}, id)
      const { settled } = await store.settle({ settlements: [completed(job)], now: t + HOUR })
      assert.deepEqual(settled, ['ok'])
      assert.equal((await getExisting(store, id)).state, 'completed')
    })

    test("a delayed job whose deadline passes while its queue is paused ends dead by the recoverer's sweep", async ({
      store,
    }) => {
      const t = Date.now()
      await store.control({ pause: { queue: 'default' }, now: t })
      const [id] = await enqueueJobs(store, t, [{ delayMs: MINUTE, expiresInMs: 2 * MINUTE }])
      const before = await store.findExpiredLeases({ now: t + MINUTE })
      assert.equal(before.startDeadlinesPassed, false, 'due, but not past its deadline')
      const after = t + 2 * MINUTE
      assert.equal((await store.findExpiredLeases({ now: after })).startDeadlinesPassed, true)
      const result = await store.recoverExpired({ now: after, leases: [], expireJobs: true })
      assert.deepEqual(result.expired, [id])
      assert.equal((await getExisting(store, id!)).lastError?.kind, 'expired')
      assert.equal((await store.findExpiredLeases({ now: after })).startDeadlinesPassed, false)
      await store.control({ resume: { queue: 'default' } })
      assert.deepEqual(await claimAt(store, after), [], 'never run, even once resumed')
    })

    test('a retry due after the deadline ends dead as expired instead of starting again', async ({
      store,
    }) => {
      const t = Date.now()
      const id = await enqueueJob(store, t, { expiresInMs: MINUTE })
      const [job] = await claimAt(store, t, {}, id)
      const error = { kind: 'error' as const, message: 'flaky' }
      const retry = { kind: 'retry' as const, id, leaseToken: job!.leaseToken, runAt: t + 2 * MINUTE, error }
      assert.deepEqual((await store.settle({ settlements: [retry], now: t })).settled, ['ok'])
      assert.deepEqual(await claimAt(store, t + 2 * MINUTE), [])
      const expired = await getExisting(store, id)
      assert.deepEqual([expired.state, expired.lastError?.kind, expired.attempts], ['dead', 'expired', 1])
    })

    test('a retried expired job runs again without its deadline', async ({ store }) => {
      const t = Date.now()
      const id = await enqueueJob(store, t, { expiresInMs: SECOND })
      await claimAt(store, t + MINUTE)
      assert.equal(await store.retry({ ids: [id], now: t + MINUTE }), 1)
      assert.equal((await getExisting(store, id)).expiresAt, null)
      await claimAt(store, t + HOUR, {}, id)
    })

    test('every job of a batch keeps its own deadline and group', async ({ store }) => {
      const t = Date.now()
      const jobs = Array.from({ length: 130 }, (_, i) =>
        i % 3 === 0 ? { expiresInMs: MINUTE, group: 'tenant-a' } : i % 3 === 1 ? { group: 'tenant-b' } : {},
      )
      const enqueued = await enqueueJobs(store, t, jobs)
      const stored = (await store.listJobs({ ids: enqueued })).jobs
      assert.deepEqual(
        stored.map((job) => [job.group, job.expiresAt]),
        jobs.map((job) => [job.group ?? null, job.expiresInMs === undefined ? null : t + MINUTE]),
      )
    })
  })

  describe('queue control: bad input', () => {
    test('refuses a bad queue change with a ValidationError naming the field, and changes nothing', async ({
      store,
    }) => {
      await store.control({ pause: { queue: 'kept', reason: 'r' }, now: 5 })
      const before = await store.control()
      const refused = async (params: ControlParams, field: string): Promise<void> => {
        await assert.rejects(
          store.control(params),
          (error: unknown) => error instanceof ValidationError && error.field === field,
          `refused on ${field}`,
        )
      }
      await refused({ pause: { queue: 'bad queue' } }, 'pause.queue')
      await refused({ pause: { queue: 'q', reason: 'x'.repeat(1001) } }, 'pause.reason')
      await refused({ pause: { queue: 'q', by: 7 } as never }, 'pause.by')
      await refused({ pause: { queue: 'q', resaon: 'typo' } as never }, 'pause.resaon')
      await refused({ resume: { queue: '' } }, 'resume.queue')
      await refused({ limit: { queue: 'q', concurrency: 0 } }, 'limit.concurrency')
      await refused({ limit: { queue: 'q', concurrency: 1.5 } }, 'limit.concurrency')
      await refused({ limit: { queue: 'q', concurrency: -1 } }, 'limit.concurrency')
      await refused({ limit: { queue: 'q' } }, 'limit')
      await refused({ limit: { queue: 'q', clear: true, concurrency: 2 } as never }, 'limit.concurrency')
      await refused({ limit: { queue: 'q', concurency: 2 } as never }, 'limit.concurency')
      await refused({ pause: { queue: 'q' }, resume: { queue: 'q' } }, 'resume')
      await refused(
        { pause: { queue: 'q' }, requestStop: true, limit: { queue: 'q', concurrency: 1 } },
        'limit',
      )
      assert.deepEqual(await store.control(), before, 'nothing changed')
    })
  })
}
