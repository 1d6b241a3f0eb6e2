/**
 * What changeJobs promises: a job that has not started takes its new priority, run time, payload
 * or maximum of attempts, in its new place in line; a started or finished job is refused and left
 * as it is; bad changes are refused whole.
 * One area of the Store conformance suite (tests/conformance/store.case.ts runs them all).
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import { ValidationError } from '../../../src/core/errors.js'
import type { JobId } from '../../../src/core/job.js'
import { PRIORITY_MAX } from '../../../src/core/validate.js'
import type { ChangeJobsParams, JobChange, Store } from '../../../src/store/store.js'
import { within } from '../../support/async.js'
import { waitReason } from '../../support/store-calls.js'
import {
  SECOND,
  MINUTE,
  HOUR,
  UNKNOWN_ID,
  enqueueJobs,
  enqueueJob,
  claimAt,
  completed,
  finishNew,
  getExisting,
  view,
  ids,
  one,
  type ConformanceCases,
} from './kit.js'

async function change(store: Store, now: number, ...changes: JobChange[]): Promise<string[]> {
  return (await store.changeJobs({ changes, now })).results
}

/** The ids a worker claims one at a time at `now`, until the queue gives no more. */
async function claimOrder(store: Store, now: number, names?: readonly string[]): Promise<JobId[]> {
  const order: JobId[] = []
  for (;;) {
    const claimed = await claimAt(store, now, { limit: 1, names })
    if (claimed.length === 0) return order
    order.push(one(claimed).id)
  }
}

export function changeJobsCases({ test }: ConformanceCases): void {
  describe('changeJobs', () => {
    test('moves a ready job to its new place in claim order when its priority changes', async ({ store }) => {
      const t = Date.now()
      const [a, b, c] = await enqueueJobs(store, t, [{}, {}, {}])
      assert.deepEqual(await change(store, t + 1, { id: c!, priority: 10 }, { id: a!, priority: -1 }), [
        'ok',
        'ok',
      ])
      const job = await getExisting(store, c!)
      assert.equal(job.priority, 10)
      assert.equal(job.state, 'ready')
      assert.equal(job.updatedAt, t + 1)
      assert.deepEqual(await claimOrder(store, t + 2), [c, b, a])
    })

    test('reorders the jobs of one name and of one group as it does those of a queue', async ({ store }) => {
      const t = Date.now()
      const [a, b, other] = await enqueueJobs(store, t, [{}, {}, { name: 'other' }])
      const [g1, g2] = await enqueueJobs(store, t, [
        { queue: 'grouped', group: 'tenant-1' },
        { queue: 'grouped', group: 'tenant-1' },
      ])
      await change(store, t, { id: b!, priority: 5 }, { id: g2!, priority: 5 })
      assert.deepEqual(await claimOrder(store, t, ['test-job']), [b, a])
      assert.deepEqual(await claimOrder(store, t), [other])
      const grouped: JobId[] = []
      for (;;) {
        const claimed = await claimAt(store, t, { queues: ['grouped'], limit: 1 })
        if (claimed.length === 0) break
        grouped.push(one(claimed).id)
      }
      assert.deepEqual(grouped, [g2, g1])
    })

    test('runs a scheduled job now when its run time is moved to now or before', async ({ store }) => {
      const t = Date.now()
      const [early, late] = await enqueueJobs(store, t, [{ delayMs: HOUR }, { delayMs: HOUR }])
      assert.deepEqual(await claimAt(store, t), [])
      assert.deepEqual(await change(store, t + 5, { id: late!, runAt: t + 5 }, { id: early!, runAt: t }), [
        'ok',
        'ok',
      ])
      const job = await getExisting(store, late!)
      assert.equal(job.state, 'ready')
      assert.equal(job.runAt, t + 5)
      // In line by run time: the one moved to the earlier time first.
      assert.deepEqual(await claimOrder(store, t + 5), [early, late])
    })

    test('makes a ready job wait when its run time is moved later, and runs it then', async ({ store }) => {
      const t = Date.now()
      const [delayed, other] = await enqueueJobs(store, t, [{}, {}])
      assert.deepEqual(await change(store, t, { id: delayed!, runAt: t + MINUTE }), ['ok'])
      const job = await getExisting(store, delayed!)
      assert.equal(job.state, 'scheduled')
      assert.equal(job.runAt, t + MINUTE)
      assert.deepEqual(await claimOrder(store, t + MINUTE - 1), [other])
      assert.deepEqual(ids(await claimAt(store, t + MINUTE)), [delayed])
    })

    test('keeps a scheduled job waiting when only its priority changes, and claims it by it once due', async ({
      store,
    }) => {
      const t = Date.now()
      const [a, b] = await enqueueJobs(store, t, [{ delayMs: MINUTE }, { delayMs: MINUTE }])
      assert.deepEqual(await change(store, t, { id: b!, priority: 3 }), ['ok'])
      const job = await getExisting(store, b!)
      assert.equal(job.state, 'scheduled')
      assert.equal(job.priority, 3)
      assert.equal(job.runAt, t + MINUTE)
      assert.deepEqual(await claimAt(store, t + MINUTE - 1), [])
      assert.deepEqual(await claimOrder(store, t + MINUTE), [b, a])
    })

    test('replaces the payload, null included, and the claim hands out the new one', async ({ store }) => {
      const t = Date.now()
      const [a, b] = await enqueueJobs(store, t, [{}, { delayMs: MINUTE }])
      assert.deepEqual(
        await change(
          store,
          t,
          { id: a!, payload: { to: 'new', list: [1, 'two'] } },
          { id: b!, payload: null },
        ),
        ['ok', 'ok'],
      )
      assert.equal((await getExisting(store, b!)).payload, null)
      assert.equal((await getExisting(store, b!)).state, 'scheduled')
      const claimed = one(await claimAt(store, t))
      assert.equal(claimed.id, a)
      assert.deepEqual(claimed.payload, { to: 'new', list: [1, 'two'] })
    })

    test('sets maxAttempts, and a job lowered below its attempts used still runs its queued attempt', async ({
      store,
    }) => {
      const t = Date.now()
      const id = await enqueueJob(store, t, { maxAttempts: 5 })
      const job = one(await claimAt(store, t))
      const retry = { kind: 'retry' as const, id, leaseToken: job.leaseToken, runAt: t + MINUTE }
      await store.settle({ settlements: [{ ...retry, error: { kind: 'error', message: 'failed' } }], now: t })
      assert.deepEqual(await change(store, t + 1, { id, maxAttempts: 1 }), ['ok'])
      const changed = await getExisting(store, id)
      assert.equal(changed.maxAttempts, 1)
      assert.equal(changed.attempts, 1)
      assert.equal(changed.state, 'scheduled')
      const again = one(await claimAt(store, t + MINUTE))
      assert.equal(again.id, id)
      assert.equal(again.attempts, 2)
      assert.equal(again.maxAttempts, 1)
    })

    test("answers 'not_found' for an unknown id and an id of no valid form, in its place", async ({
      store,
    }) => {
      const t = Date.now()
      const id = await enqueueJob(store, t)
      assert.deepEqual(
        await change(
          store,
          t,
          { id: UNKNOWN_ID, priority: 1 },
          { id, priority: 2 },
          { id: 'abc', priority: 3 },
        ),
        ['not_found', 'ok', 'not_found'],
      )
      assert.equal((await getExisting(store, id)).priority, 2)
    })

    test("refuses an active job with 'not_changeable' and leaves it and its lease as they are", async ({
      store,
    }) => {
      const t = Date.now()
      await enqueueJob(store, t)
      const job = one(await claimAt(store, t))
      const before = view(await getExisting(store, job.id))
      assert.deepEqual(
        await change(store, t + 1, { id: job.id, priority: 9, runAt: t + HOUR, payload: 1, maxAttempts: 2 }),
        ['not_changeable'],
      )
      assert.deepEqual(view(await getExisting(store, job.id)), before)
      assert.deepEqual((await store.settle({ settlements: [completed(job)], now: t + 2 })).settled, ['ok'])
    })

    test("refuses completed and dead jobs with 'not_changeable'", async ({ store }) => {
      const t = Date.now()
      const done = await finishNew(store, t, 'completed')
      const dead = await finishNew(store, t, 'dead')
      const cancelled = await enqueueJob(store, t)
      await store.cancel({ ids: [cancelled], now: t })
      const before = await Promise.all(
        [done, dead, cancelled].map(async (id) => view(await getExisting(store, id))),
      )
      assert.deepEqual(
        await change(
          store,
          t + 1,
          { id: done, runAt: t },
          { id: dead, priority: 1 },
          { id: cancelled, payload: 2 },
        ),
        ['not_changeable', 'not_changeable', 'not_changeable'],
      )
      const after = await Promise.all(
        [done, dead, cancelled].map(async (id) => view(await getExisting(store, id))),
      )
      assert.deepEqual(after, before)
    })

    test('never changes a job under the lease of a claim made at the same time through another instance', async (h) => {
      const peer = await h.openPeer()
      const t = Date.now()
      for (let round = 0; round < 5; round++) {
        const id = await enqueueJob(h.store, t)
        const [claimed, results] = await Promise.all([
          claimAt(peer, t, { limit: 1 }),
          change(h.store, t, { id, payload: { round }, priority: 7 }),
        ])
        // A claim may pass over the job while the change holds it (PostgreSQL's SKIP LOCKED): it is
        // in line, changed, for the next claim.
        const job = claimed.length > 0 ? one(claimed) : one(await claimAt(peer, t, { limit: 1 }))
        const stored = await getExisting(h.store, id)
        assert.equal(stored.state, 'active')
        if (results[0] === 'ok') {
          // Changed first: the claim took the job as changed.
          assert.deepEqual(job.payload, { round })
          assert.equal(job.priority, 7)
        } else {
          assert.deepEqual(results, ['not_changeable'])
          assert.deepEqual(job.payload, { n: 1 })
        }
        assert.deepEqual(stored.payload, job.payload)
        assert.deepEqual((await peer.settle({ settlements: [completed(job)], now: t })).settled, ['ok'])
      }
    })

    test('wakes a worker waiting on the queue when a change makes a job ready now', async ({ store }) => {
      const id = await enqueueJob(store, Date.now(), { delayMs: HOUR })
      const waiting = waitReason(store, { queues: ['default'], timeoutMs: 2 * SECOND })
      await store.changeJobs({ changes: [{ id, runAt: Date.now() }] })
      assert.equal(await within(3 * SECOND, 'waitForWork', waiting), 'notified')
    })

    test('wakes a worker waiting through another store instance when a change makes a job ready now', async (h) => {
      const peer = await h.openPeer()
      const id = await enqueueJob(h.store, Date.now(), { delayMs: HOUR })
      const waiting = waitReason(h.store, { queues: ['default'], timeoutMs: 2 * SECOND })
      await peer.changeJobs({ changes: [{ id, runAt: Date.now() }] })
      assert.equal(await within(3 * SECOND, 'waitForWork', waiting), 'notified')
    })

    test('refuses a bad change with a ValidationError naming it, and changes nothing of the call', async ({
      store,
    }) => {
      const t = Date.now()
      const [id, other] = await enqueueJobs(store, t, [{}, {}])
      const before = view(await getExisting(store, id!))
      const refused = async (params: ChangeJobsParams, code: string, field: string): Promise<void> => {
        await assert.rejects(
          store.changeJobs(params),
          (error: unknown) =>
            error instanceof ValidationError && error.code === code && error.field === field,
          `${field}: ${code}`,
        )
      }
      const good = { id: id!, priority: 4 }
      const with2 = (bad: unknown): ChangeJobsParams => ({ changes: [good, bad as JobChange], now: t })
      await refused(with2({ id: other }), 'invalid_option', 'changes[1]')
      await refused(with2({ id: other, payload: undefined }), 'invalid_option', 'changes[1]')
      await refused(with2({ id: other, prority: 1 }), 'invalid_option', 'changes[1].prority')
      await refused(with2({ priority: 1 }), 'invalid_option', 'changes[1].id')
      await refused(with2({ id: 7, priority: 1 }), 'invalid_option', 'changes[1].id')
      await refused(with2({ id: id!, priority: 1 }), 'invalid_option', 'changes[1].id')
      await refused(with2({ id: other, priority: 1.5 }), 'invalid_priority', 'changes[1].priority')
      await refused(
        with2({ id: other, priority: PRIORITY_MAX + 1 }),
        'invalid_priority',
        'changes[1].priority',
      )
      await refused(with2({ id: other, priority: null }), 'invalid_priority', 'changes[1].priority')
      await refused(with2({ id: other, runAt: Number.NaN }), 'invalid_run_at', 'changes[1].runAt')
      await refused(with2({ id: other, runAt: '2030-01-01' }), 'invalid_run_at', 'changes[1].runAt')
      await refused(with2({ id: other, runAt: -1 }), 'invalid_run_at', 'changes[1].runAt')
      await refused(with2({ id: other, maxAttempts: 0 }), 'invalid_max_attempts', 'changes[1].maxAttempts')
      await refused(with2({ id: other, payload: { f: () => 1 } }), 'invalid_payload', 'changes[1].payload.f')
      await refused(
        with2({ id: other, payload: Number.POSITIVE_INFINITY }),
        'invalid_payload',
        'changes[1].payload',
      )
      await refused(
        { changes: [good, { id: other!, payload: 'x'.repeat(20) }], maxPayloadBytes: 10 },
        'payload_too_large',
        'changes[1].payload',
      )
      await refused({ changes: 'no' } as never, 'invalid_option', 'changes')
      await refused({ changes: [good], when: t } as never, 'invalid_option', 'when')
      assert.deepEqual(view(await getExisting(store, id!)), before)
      assert.deepEqual((await store.changeJobs({ changes: [] })).results, [])
    })
  })
}
