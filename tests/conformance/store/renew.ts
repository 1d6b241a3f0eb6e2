/**
 * What renew promises: leases extended only for their holder.
 * One area of the Store conformance suite (tests/conformance/store.case.ts runs them all).
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import {
  SECOND,
  MINUTE,
  UNKNOWN_ID,
  enqueueJobs,
  enqueueJob,
  claimAt,
  renewAt,
  completed,
  getExisting,
  one,
  type ConformanceCases,
} from './kit.js'

export function renewCases({ test }: ConformanceCases): void {
  describe('renew', () => {
    test('extends the lease to now plus leaseMs', async ({ store }) => {
      const t = Date.now()
      await enqueueJob(store, t)
      const job = one(await claimAt(store, t, { leaseMs: 10 * SECOND }))
      const results = await store.renew({
        leases: [{ id: job.id, leaseToken: job.leaseToken }],
        leaseMs: 20 * SECOND,
        now: t + 5 * SECOND,
      })
      assert.deepEqual(results, ['ok'])
      const stored = await getExisting(store, job.id)
      assert.equal(stored.leaseExpiresAt, t + 25 * SECOND)
      assert.equal(stored.state, 'active')
      assert.equal(stored.attempts, 1)
      assert.equal(stored.workerId, job.workerId)
      assert.deepEqual((await store.settle({ settlements: [completed(job)], now: t + 6 * SECOND })).settled, [
        'ok',
      ])
    })

    test("returns 'lease_lost' for a stale token and leaves that lease as it was", async ({ store }) => {
      const t = Date.now()
      await enqueueJobs(store, t, [{}, {}])
      const [kept, other] = await claimAt(store, t, { limit: 2, leaseMs: 10 * SECOND })
      const results = await store.renew({
        leases: [
          { id: kept!.id, leaseToken: kept!.leaseToken },
          { id: other!.id, leaseToken: 'not-the-token' },
          { id: UNKNOWN_ID, leaseToken: kept!.leaseToken },
        ],
        leaseMs: MINUTE,
        now: t + SECOND,
      })
      assert.deepEqual(results, ['ok', 'lease_lost', 'lease_lost'])
      assert.equal((await getExisting(store, kept!.id)).leaseExpiresAt, t + SECOND + MINUTE)
      assert.equal((await getExisting(store, other!.id)).leaseExpiresAt, t + 10 * SECOND)
    })

    test('keeps a renewed job from being recovered', async ({ store }) => {
      const t = Date.now()
      await enqueueJob(store, t)
      const job = one(await claimAt(store, t, { leaseMs: SECOND }))
      assert.deepEqual(await renewAt(store, t + 900, job, SECOND), ['ok'])
      assert.deepEqual(await store.recoverExpired({ now: t + 1500 }), {
        retried: [],
        dead: [],
        clamped: 0,
        expired: [],
      })
      assert.equal((await getExisting(store, job.id)).state, 'active')
      assert.deepEqual(await store.recoverExpired({ now: t + 1900 }), {
        retried: [job.id],
        dead: [],
        clamped: 0,
        expired: [],
      })
    })

    test('returns an empty list for an empty renew batch', async ({ store }) => {
      assert.deepEqual(await store.renew({ leases: [], leaseMs: MINUTE, now: Date.now() }), [])
    })
  })
}
