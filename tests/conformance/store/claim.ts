/**
 * What claim promises: order, leases, queues and names.
 * One area of the Store conformance suite (tests/conformance/store.case.ts runs them all).
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import { ValidationError } from '../../../src/core/errors.js'
import type { JobError, JobId } from '../../../src/core/job.js'
import type { Settlement } from '../../../src/core/outcome.js'
import { newJob, sortIds } from '../../support/store-harness.js'
import { within } from '../../support/async.js'
import { waitReason } from '../../support/store-calls.js'
import {
  SECOND,
  MINUTE,
  LEASE_MS,
  enqueueJobs,
  enqueueJob,
  claimAt,
  completed,
  getExisting,
  ids,
  one,
  type ConformanceCases,
} from './kit.js'

export function claimCases({ test }: ConformanceCases): void {
  describe('claim', () => {
    test('takes queues strictly in the order given, whatever the priorities', async ({ store }) => {
      const t = Date.now()
      const [a1, b1] = await enqueueJobs(store, t, [
        { queue: 'a', priority: 0 },
        { queue: 'b', priority: 100 },
      ])
      assert.deepEqual(ids(await claimAt(store, t, { queues: ['a', 'b'], limit: 1 })), [a1])
      const a2 = await enqueueJob(store, t, { queue: 'a', priority: 100 })
      assert.deepEqual(ids(await claimAt(store, t, { queues: ['b', 'a'], limit: 1 })), [b1])
      assert.deepEqual(ids(await claimAt(store, t, { queues: ['b', 'a'], limit: 1 })), [a2])
    })

    test('fills its limit across queues in queue order', async ({ store }) => {
      const t = Date.now()
      const b = await enqueueJobs(
        store,
        t,
        Array.from({ length: 5 }, () => ({ queue: 'b', priority: 5 })),
      )
      const a = await enqueueJobs(store, t, [{ queue: 'a' }, { queue: 'a' }])
      const claimed = await claimAt(store, t, { queues: ['a', 'b'], limit: 3 })
      assert.deepEqual(ids(claimed), [a[0], a[1], b[0]])
    })

    test('takes higher priority first, then earlier runAt, then lower id within a queue', async ({
      store,
    }) => {
      const t = Date.now()
      const [j1, j2, j3, j4, j5, j6] = await enqueueJobs(store, t, [
        { priority: 0, runAt: t - 1 * SECOND },
        { priority: 5, runAt: t - 1 * SECOND },
        { priority: 0, runAt: t - 3 * SECOND },
        { priority: 0, runAt: t - 1 * SECOND },
        { priority: -5, runAt: t - 9 * SECOND },
        { priority: 5, runAt: t - 2 * SECOND },
      ])
      const order: JobId[] = []
      for (;;) {
        const claimed = await claimAt(store, t, { limit: 1 })
        if (claimed.length === 0) break
        assert.equal(claimed.length, 1)
        order.push(claimed[0]!.id)
      }
      assert.deepEqual(order, [j6, j2, j3, j1, j4, j5])
    })

    test('returns a claimed batch in claim order', async ({ store }) => {
      const t = Date.now()
      const [j1, j2, j3, j4, j5] = await enqueueJobs(store, t, [
        { queue: 'b', priority: 9 },
        { queue: 'a', priority: 0, runAt: t - SECOND },
        { queue: 'a', priority: 1 },
        { queue: 'a', priority: 0, runAt: t - 2 * SECOND },
        { queue: 'b', priority: 10 },
      ])
      const claimed = await claimAt(store, t, { queues: ['a', 'b'], limit: 10 })
      assert.deepEqual(ids(claimed), [j3, j4, j2, j5, j1])
    })

    test('takes no more jobs than its limit', async ({ store }) => {
      const t = Date.now()
      await enqueueJobs(store, t, [{}, {}, {}, {}, {}])
      assert.equal((await claimAt(store, t, { limit: 2 })).length, 2)
      assert.equal((await claimAt(store, t, { limit: 1 })).length, 1)
      assert.equal((await claimAt(store, t, { limit: 10 })).length, 2)
    })

    test('marks claimed jobs active with a counted attempt, a fresh lease token and the worker id', async ({
      store,
    }) => {
      const t = Date.now()
      const enqueued = await enqueueJobs(store, t, [{}, {}, {}])
      const claimed = await claimAt(store, t + 10, { limit: 3, leaseMs: 30 * SECOND, workerId: 'worker-a' })
      assert.deepEqual(sortIds(ids(claimed)), enqueued)
      for (const job of claimed) {
        assert.equal(job.state, 'active')
        assert.equal(job.attempts, 1)
        assert.equal(typeof job.leaseToken, 'string')
        assert.ok(job.leaseToken.length > 0, 'the lease token is not empty')
        assert.equal(job.leaseExpiresAt, t + 10 + 30 * SECOND)
        assert.equal(job.workerId, 'worker-a')
        assert.equal(job.queue, 'default')
        assert.equal(job.name, 'test-job')
        assert.deepEqual(job.payload, { n: 1 })
        assert.equal(job.maxAttempts, 25)
        const stored = await getExisting(store, job.id)
        assert.equal(stored.state, 'active')
        assert.equal(stored.attempts, 1)
        assert.equal(stored.leaseExpiresAt, t + 10 + 30 * SECOND)
        assert.equal(stored.workerId, 'worker-a')
      }
      assert.equal(new Set(claimed.map((j) => j.leaseToken)).size, 3, 'every claim has its own token')
    })

    test('draws a new lease token every time a job is claimed', async ({ store }) => {
      const t = Date.now()
      await enqueueJob(store, t)
      const first = one(await claimAt(store, t))
      const retry: Settlement = {
        kind: 'retry',
        id: first.id,
        leaseToken: first.leaseToken,
        runAt: t,
        error: { kind: 'error', message: 'again' },
      }
      assert.deepEqual((await store.settle({ settlements: [retry], now: t })).settled, ['ok'])
      const second = one(await claimAt(store, t))
      assert.equal(second.id, first.id)
      assert.equal(second.attempts, 2)
      assert.notEqual(second.leaseToken, first.leaseToken)
    })

    test('does not claim a scheduled job before its runAt', async ({ store }) => {
      const t = Date.now()
      const id = await enqueueJob(store, t, { delayMs: 10 * SECOND })
      assert.deepEqual(await claimAt(store, t + 10 * SECOND - 1), [])
      assert.equal((await getExisting(store, id)).state, 'scheduled')
      const claimed = one(await claimAt(store, t + 10 * SECOND))
      assert.equal(claimed.id, id)
      assert.equal(claimed.attempts, 1)
    })

    test('claims a due scheduled job in priority order with ready jobs', async ({ store }) => {
      const t = Date.now()
      const [ready1, ready2, scheduled] = await enqueueJobs(store, t, [
        { priority: 0 },
        { priority: 0 },
        { priority: 5, runAt: t + SECOND },
      ])
      assert.deepEqual(ids(await claimAt(store, t + 500, { limit: 1 })), [ready1])
      assert.deepEqual(ids(await claimAt(store, t + SECOND, { limit: 1 })), [scheduled])
      assert.deepEqual(ids(await claimAt(store, t + SECOND, { limit: 1 })), [ready2])
    })

    test('leaves queues that are not listed untouched', async ({ store }) => {
      const t = Date.now()
      const [a, c, b] = await enqueueJobs(store, t, [
        { queue: 'a' },
        { queue: 'c', priority: 100 },
        { queue: 'b' },
      ])
      assert.deepEqual(sortIds(ids(await claimAt(store, t, { queues: ['a', 'b'], limit: 10 }))), [a, b])
      const untouched = await getExisting(store, c!)
      assert.equal(untouched.state, 'ready')
      assert.equal(untouched.attempts, 0)
      assert.deepEqual(ids(await claimAt(store, t, { queues: ['c'] })), [c])
    })

    test('never hands out a job that is already claimed', async ({ store }) => {
      const t = Date.now()
      await enqueueJobs(store, t, [{}, {}, {}])
      assert.equal((await claimAt(store, t, { limit: 10, leaseMs: MINUTE })).length, 3)
      assert.deepEqual(await claimAt(store, t, { limit: 10, workerId: 'worker-2' }), [])
      assert.deepEqual(await claimAt(store, t + MINUTE - 1, { limit: 10, workerId: 'worker-2' }), [])
    })

    test('never gives one job to two concurrent claims from different store instances', async (h) => {
      const t = Date.now()
      const peer = await h.openPeer()
      const enqueued = await enqueueJobs(
        h.store,
        t,
        Array.from({ length: 30 }, () => ({})),
      )
      const seen: JobId[] = []
      for (let round = 0; round < 30; round++) {
        const [mine, theirs] = await Promise.all([
          claimAt(h.store, t, { limit: 4, workerId: 'worker-1' }),
          claimAt(peer, t, { limit: 4, workerId: 'worker-2' }),
        ])
        if (mine.length === 0 && theirs.length === 0) break
        seen.push(...ids(mine), ...ids(theirs))
      }
      assert.equal(new Set(seen).size, seen.length, 'no job was claimed twice')
      assert.deepEqual(sortIds(seen), enqueued, 'every job was claimed')
    })

    test('returns an empty list when no job is ready', async ({ store }) => {
      const t = Date.now()
      assert.deepEqual(await claimAt(store, t, { queues: ['default', 'other'] }), [])
      await enqueueJob(store, t, { delayMs: MINUTE })
      await enqueueJob(store, t, { queue: 'elsewhere' })
      assert.deepEqual(await claimAt(store, t, { queues: ['default', 'other'] }), [])
    })
  })

  describe('claim with names', () => {
    test('takes only jobs of the names given, in the order a claim without names takes them', async ({
      store,
    }) => {
      const t = Date.now()
      const [a1, , b1, c1, a2, , c2, b2] = await enqueueJobs(store, t, [
        { queue: 'a', name: 'resize', priority: 0 },
        { queue: 'a', name: 'unknown', priority: 9 },
        { queue: 'b', name: 'mail', priority: 1 },
        { queue: 'a', name: 'mail', priority: 0, runAt: t - SECOND },
        { queue: 'a', name: 'resize', priority: 3 },
        { queue: 'b', name: 'unknown', priority: 9 },
        { queue: 'a', name: 'mail', priority: 3, runAt: t - SECOND },
        { queue: 'b', name: 'resize', priority: 1, runAt: t - SECOND },
      ])
      const claimed = await claimAt(store, t, { queues: ['a', 'b'], names: ['resize', 'mail'], limit: 10 })
      // Queue a: priority 3 (c2 runs earlier than a2), then priority 0 (c1 earlier than a1);
      // queue b: priority 1, b2 earlier than b1.
      assert.deepEqual(ids(claimed), [c2, a2, c1, a1, b2, b1])
    })

    test('fills its limit across queues in queue order, one name at a time', async ({ store }) => {
      const t = Date.now()
      const [x1, , x2, y1] = await enqueueJobs(store, t, [
        { queue: 'a', name: 'mine' },
        { queue: 'a', name: 'theirs' },
        { queue: 'a', name: 'mine' },
        { queue: 'b', name: 'mine' },
        { queue: 'b', name: 'mine' },
      ])
      const names = ['mine']
      assert.deepEqual(ids(await claimAt(store, t, { queues: ['a', 'b'], names, limit: 3 })), [x1, x2, y1])
      assert.equal((await claimAt(store, t, { queues: ['a', 'b'], names, limit: 3 })).length, 1)
      assert.deepEqual(await claimAt(store, t, { queues: ['a', 'b'], names, limit: 3 }), [])
    })

    test('leaves jobs of other names ready, their attempts unused, for a claim that takes them', async ({
      store,
    }) => {
      const t = Date.now()
      const [other] = await enqueueJobs(store, t, [{ name: 'new-kind', priority: 5 }])
      assert.deepEqual(await claimAt(store, t, { names: ['old-kind'] }), [])
      const untouched = await getExisting(store, other!)
      assert.equal(untouched.state, 'ready')
      assert.equal(untouched.attempts, 0)
      assert.equal(untouched.lastError, null)
      const [job] = await claimAt(store, t, { names: ['old-kind', 'new-kind'] }, other)
      assert.equal(job!.attempts, 1)
    })

    test('finds its jobs behind many ready jobs of other names', async ({ store }) => {
      const t = Date.now()
      await store.enqueue({
        jobs: Array.from({ length: 500 }, () => newJob({ name: 'backlog', priority: 10 })),
        now: t,
      })
      const mine = await enqueueJob(store, t, { name: 'mine' })
      await claimAt(store, t, { names: ['mine'], limit: 1 }, mine)
      assert.deepEqual(await claimAt(store, t, { names: ['mine'] }), [])
      assert.equal((await claimAt(store, t, { limit: 1000 })).length, 500, 'the backlog is all there')
    })

    test('claims jobs of its names that come back: due, retried, snoozed, recovered, revived', async ({
      store,
    }) => {
      const t = Date.now()
      const names = ['mine']
      const [scheduled] = await enqueueJobs(store, t, [{ name: 'mine', runAt: t + SECOND }])
      await claimAt(store, t + SECOND, { names }, scheduled)
      const [retried] = await enqueueJobs(store, t, [{ name: 'mine', maxAttempts: 2 }])
      const first = one(await claimAt(store, t + SECOND, { names }))
      assert.equal(first.id, retried)
      const error: JobError = { kind: 'error', message: 'again' }
      const back: Settlement[] = [
        { kind: 'retry', id: first.id, leaseToken: first.leaseToken, runAt: t, error },
      ]
      assert.deepEqual((await store.settle({ settlements: back, now: t + SECOND })).settled, ['ok'])
      const second = one(await claimAt(store, t + SECOND, { names, leaseMs: SECOND }))
      assert.equal(second.id, retried)
      const snooze: Settlement = { kind: 'snoozed', id: second.id, leaseToken: second.leaseToken, runAt: t }
      assert.deepEqual((await store.settle({ settlements: [snooze], now: t + SECOND })).settled, ['ok'])
      const third = one(await claimAt(store, t + SECOND, { names, leaseMs: SECOND }))
      assert.equal(third.id, retried)
      // Its lease runs out: recovered, with its last attempt used up, it is dead; revived, it is back.
      assert.deepEqual(await store.recoverExpired({ now: t + 3 * SECOND }), {
        retried: [],
        dead: [retried],
        clamped: 0,
        expired: [],
      })
      assert.equal(await store.retry({ ids: [retried!], now: t + 3 * SECOND }), 1)
      const fourth = one(await claimAt(store, t + 3 * SECOND, { names, leaseMs: SECOND }))
      assert.equal(fourth.id, retried)
      assert.deepEqual(await store.recoverExpired({ now: t + 5 * SECOND }), {
        retried: [retried],
        dead: [],
        clamped: 0,
        expired: [],
      })
      await claimAt(store, t + 5 * SECOND, { names }, retried)
    })

    test('does not hand out a cancelled job, nor one another claim took without names', async ({ store }) => {
      const t = Date.now()
      const [cancelled, taken, left] = await enqueueJobs(store, t, [
        { name: 'mine', priority: 2 },
        { name: 'mine', priority: 1 },
        { name: 'mine' },
      ])
      assert.equal(await store.cancel({ ids: [cancelled!], now: t }), 1)
      await claimAt(store, t, { limit: 1 }, taken)
      await claimAt(store, t, { names: ['mine'] }, left)
      assert.deepEqual(await claimAt(store, t, { names: ['mine'] }), [])
      assert.deepEqual(await claimAt(store, t), [])
    })

    test('settleAndClaim claims only the names given', async ({ store }) => {
      const t = Date.now()
      const [first, , third] = await enqueueJobs(store, t, [
        { name: 'mine' },
        { name: 'theirs' },
        { name: 'mine' },
      ])
      const [job] = await claimAt(store, t, { names: ['mine'], limit: 1 }, first)
      const { settled, claimed } = await store.settle({
        settlements: [completed(job)],
        claim: { queues: ['default'], names: ['mine'], limit: 5, leaseMs: LEASE_MS, workerId: 'worker-1' },
        now: t + 1,
      })
      assert.deepEqual(settled, ['ok'])
      assert.deepEqual(ids(claimed), [third])
    })

    test('rejects an empty names list, a repeated name and a malformed one, naming the field', async ({
      store,
    }) => {
      const t = Date.now()
      const id = await enqueueJob(store, t, { name: 'mine' })
      for (const [names, field] of [
        [[], 'names'],
        [['mine', 'mine'], 'names[1]'],
        [['mine', 'no spaces'], 'names[1]'],
      ] as const) {
        await assert.rejects(
          claimAt(store, t, { names }),
          (error: unknown) =>
            error instanceof ValidationError && error.code === 'invalid_name' && error.field === field,
          `names ${JSON.stringify(names)}`,
        )
      }
      assert.equal((await getExisting(store, id)).state, 'ready', 'nothing was claimed')
    })

    test('a wait for some names is not woken by ready jobs of other names, and is by its own', async (h) => {
      const peer = await h.openPeer()
      await enqueueJob(h.store, Date.now(), { name: 'theirs' })
      const names = ['mine']
      assert.equal(
        await within(
          5 * SECOND,
          'waitForWork',
          waitReason(h.store, { queues: ['default'], names, timeoutMs: 300 }),
        ),
        'timeout',
      )
      const waiting = waitReason(h.store, { queues: ['default'], names, timeoutMs: 10 * SECOND })
      await new Promise((resolve) => setTimeout(resolve, 100))
      await enqueueJob(peer, Date.now(), { name: 'mine' })
      assert.equal(await within(5 * SECOND, 'waitForWork', waiting), 'notified')
    })
  })
}
