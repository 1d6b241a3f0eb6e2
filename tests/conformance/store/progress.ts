/**
 * What renew and settle promise about a handler's reports (docs/progress.md): the progress and
 * the log tail they carry are written with the lease they renew or the outcome they settle, only
 * for the lease's holder, bounded, and kept across attempts.
 * One area of the Store conformance suite (tests/conformance/store.case.ts runs them all).
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import { ValidationError } from '../../../src/core/errors.js'
import {
  LOG_LINE_MAX_CHARS,
  LOG_MAX_LINES,
  PROGRESS_MAX_BYTES,
  type JobReport,
} from '../../../src/core/progress.js'
import type { ClaimedJob } from '../../../src/core/job.js'
import type { Settlement } from '../../../src/core/outcome.js'
import type { Store } from '../../../src/store/store.js'
import {
  SECOND,
  LEASE_MS,
  enqueueJob,
  claimAt,
  completed,
  getExisting,
  one,
  view,
  type ConformanceCases,
} from './kit.js'

const refusedOn = (field: string) => (error: unknown) =>
  error instanceof ValidationError && error.field === field

function retryNow(job: ClaimedJob, now: number): Settlement {
  return {
    kind: 'retry',
    id: job.id,
    leaseToken: job.leaseToken,
    runAt: now,
    error: { kind: 'error', message: 'try again' },
  }
}

/** A job claimed at `t` whose handler's reports a renewal at t + 1 s wrote. */
async function claimedWithReports(store: Store, t: number): Promise<ClaimedJob> {
  const id = await enqueueJob(store, t)
  const job = one(await claimAt(store, t, {}, id))
  const renewed = await store.renew({
    leases: [
      { id, leaseToken: job.leaseToken, report: { progress: '{"done":3,"of":10}', logs: ['one', 'two'] } },
    ],
    leaseMs: LEASE_MS,
    now: t + SECOND,
  })
  assert.deepEqual(renewed, ['ok'])
  return job
}

export function progressCases({ test }: ConformanceCases): void {
  describe('progress and logs', () => {
    test('a job has no progress and no logs until a handler reports them', async ({ store }) => {
      const t = Date.now()
      const id = await enqueueJob(store, t)
      const job = one(await claimAt(store, t, {}, id))
      assert.equal(job.progress, null)
      assert.deepEqual(job.logs, [])
      const stored = await getExisting(store, id)
      assert.equal(stored.progress, null)
      assert.deepEqual(stored.logs, [])
    })

    test('a renewal writes the progress and the log tail it carries, and getJob and listJobs show them', async ({
      store,
    }) => {
      const t = Date.now()
      const job = await claimedWithReports(store, t)
      const stored = await getExisting(store, job.id)
      assert.deepEqual(stored.progress, { done: 3, of: 10 })
      assert.deepEqual(stored.logs, ['one', 'two'])
      assert.equal(stored.leaseExpiresAt, t + SECOND + LEASE_MS, 'and renews the lease as ever')
      const page = await store.listJobs({ ids: [job.id] })
      assert.deepEqual(view(one(page.jobs)), view(stored))
    })

    test('a renewal without reports keeps the stored ones; one with only progress keeps the logs', async ({
      store,
    }) => {
      const t = Date.now()
      const job = await claimedWithReports(store, t)
      const lease = { id: job.id, leaseToken: job.leaseToken }
      assert.deepEqual(await store.renew({ leases: [lease], leaseMs: LEASE_MS, now: t + 2 * SECOND }), ['ok'])
      assert.deepEqual(
        await store.renew({
          leases: [{ ...lease, report: { progress: '7' } }],
          leaseMs: LEASE_MS,
          now: t + 3 * SECOND,
        }),
        ['ok'],
      )
      const stored = await getExisting(store, job.id)
      assert.equal(stored.progress, 7)
      assert.deepEqual(stored.logs, ['one', 'two'])
    })

    test('a settlement writes the reports it carries with the outcome, for every kind', async ({ store }) => {
      const t = Date.now()
      const ids = [await enqueueJob(store, t), await enqueueJob(store, t), await enqueueJob(store, t)]
      const [a, b, c] = await claimAt(store, t, { limit: 3 })
      const settled = await store.settle({
        settlements: [
          { ...completed(a), report: { progress: '100', logs: ['finished'] } },
          {
            kind: 'dead',
            id: b!.id,
            leaseToken: b!.leaseToken,
            error: { kind: 'error', message: 'no' },
            report: { progress: '"halfway"' },
          },
          {
            kind: 'snoozed',
            id: c!.id,
            leaseToken: c!.leaseToken,
            runAt: t + SECOND,
            report: { logs: ['later'] },
          },
        ],
        now: t + SECOND,
      })
      assert.deepEqual(settled.settled, ['ok', 'ok', 'ok'])
      const [first, second, third] = await Promise.all(ids.map((id) => getExisting(store, id)))
      assert.equal(first!.state, 'completed')
      assert.equal(first!.progress, 100)
      assert.deepEqual(first!.logs, ['finished'])
      assert.equal(second!.state, 'dead')
      assert.equal(second!.progress, 'halfway')
      assert.deepEqual(second!.logs, [])
      assert.equal(third!.progress, null)
      assert.deepEqual(third!.logs, ['later'])
    })

    test('a settlement that claims in the same call writes its reports too', async ({ store }) => {
      const t = Date.now()
      const id = await enqueueJob(store, t)
      const job = one(await claimAt(store, t, {}, id))
      const next = await enqueueJob(store, t)
      const { settled, claimed } = await store.settle({
        settlements: [{ ...completed(job), report: { progress: '{"step":"last"}', logs: ['a', 'b'] } }],
        claim: { queues: ['default'], limit: 1, leaseMs: LEASE_MS, workerId: 'worker-1' },
        now: t + SECOND,
      })
      assert.deepEqual(settled, ['ok'])
      assert.deepEqual(
        claimed.map((j) => j.id),
        [next],
      )
      const stored = await getExisting(store, id)
      assert.deepEqual(stored.progress, { step: 'last' })
      assert.deepEqual(stored.logs, ['a', 'b'])
    })

    test('a stale lease token writes no report, neither by renewal nor by settlement', async ({ store }) => {
      const t = Date.now()
      const id = await enqueueJob(store, t)
      const job = one(await claimAt(store, t, {}, id))
      const stale = { id, leaseToken: 'not-the-token', report: { progress: '1', logs: ['stale'] } }
      assert.deepEqual(await store.renew({ leases: [stale], leaseMs: LEASE_MS, now: t + SECOND }), [
        'lease_lost',
      ])
      const { settled } = await store.settle({
        settlements: [
          { ...completed(job), leaseToken: 'not-the-token', report: { progress: '2', logs: ['stale'] } },
        ],
        now: t + SECOND,
      })
      assert.deepEqual(settled, ['lease_lost'])
      const stored = await getExisting(store, id)
      assert.equal(stored.state, 'active')
      assert.equal(stored.progress, null)
      assert.deepEqual(stored.logs, [])
    })

    test('progress and logs survive a retry: the next attempt is claimed with them', async ({ store }) => {
      const t = Date.now()
      const job = await claimedWithReports(store, t)
      const { settled } = await store.settle({
        settlements: [{ ...retryNow(job, t + 2 * SECOND), report: { logs: ['one', 'two', 'failed'] } }],
        now: t + 2 * SECOND,
      })
      assert.deepEqual(settled, ['ok'])
      const again = one(await claimAt(store, t + 3 * SECOND, {}, job.id))
      assert.equal(again.attempts, 2)
      assert.deepEqual(again.progress, { done: 3, of: 10 })
      assert.deepEqual(again.logs, ['one', 'two', 'failed'])
    })

    test('refuses malformed or oversized reports, writing nothing', async ({ store }) => {
      const t = Date.now()
      const id = await enqueueJob(store, t)
      const job = one(await claimAt(store, t, {}, id))
      const lease = { id, leaseToken: job.leaseToken }
      const renew = (report: object) =>
        store.renew({
          leases: [{ ...lease, report: report as JobReport }],
          leaseMs: LEASE_MS,
          now: t + SECOND,
        })
      const tooMany = Array.from({ length: LOG_MAX_LINES + 1 }, (_, i) => `line ${i}`)
      await assert.rejects(renew({ logs: tooMany }), refusedOn('leases[0].report.logs'))
      await assert.rejects(
        renew({ logs: ['x'.repeat(LOG_LINE_MAX_CHARS + 1)] }),
        refusedOn('leases[0].report.logs[0]'),
      )
      await assert.rejects(renew({ logs: [42] }), refusedOn('leases[0].report.logs[0]'))
      await assert.rejects(renew({ progress: 'not json' }), refusedOn('leases[0].report.progress'))
      await assert.rejects(
        renew({ progress: JSON.stringify('x'.repeat(PROGRESS_MAX_BYTES)) }),
        (error: unknown) =>
          refusedOn('leases[0].report.progress')(error) &&
          (error as ValidationError).code === 'payload_too_large',
      )
      await assert.rejects(
        store.settle({ settlements: [{ ...completed(job), report: { logs: tooMany } }], now: t + SECOND }),
        refusedOn('settlements[0].report.logs'),
      )
      const stored = await getExisting(store, id)
      assert.equal(stored.state, 'active')
      assert.equal(stored.progress, null)
      assert.deepEqual(stored.logs, [])
      assert.equal(stored.leaseExpiresAt, job.leaseExpiresAt)
    })
  })
}
