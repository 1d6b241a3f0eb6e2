/**
 * What recoverExpired promises: expired leases back in line, listed, and clamped.
 * One area of the Store conformance suite (tests/conformance/store.case.ts runs them all).
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import { sortIds } from '../../support/store-harness.js'
import { clampLeases } from '../../support/store-calls.js'
import {
  SECOND,
  MINUTE,
  HOUR,
  enqueueJobs,
  enqueueJob,
  claimAt,
  renewAt,
  completed,
  finishNew,
  getExisting,
  view,
  ids,
  one,
  type ConformanceCases,
} from './kit.js'

export function recoverCases({ test }: ConformanceCases): void {
  describe('recoverExpired', () => {
    test('puts jobs whose lease ran out back to ready with the attempt counted', async ({ store }) => {
      const t = Date.now()
      const enqueued = await enqueueJobs(store, t, [{}, {}])
      await claimAt(store, t, { limit: 2, leaseMs: SECOND })
      const recovered = await store.recoverExpired({ now: t + SECOND })
      assert.deepEqual(sortIds(recovered.retried), enqueued, 'a lease that expires at now has run out')
      assert.deepEqual(recovered.dead, [])
      for (const id of enqueued) {
        const job = await getExisting(store, id)
        assert.equal(job.state, 'ready')
        assert.equal(job.attempts, 1)
        assert.equal(job.lastError?.kind, 'lease_expired')
        assert.equal(typeof job.lastError?.message, 'string')
        assert.equal(job.leaseExpiresAt, null)
        assert.equal(job.finishedAt, null)
      }
      const again = await claimAt(store, t + SECOND, { limit: 2 })
      assert.deepEqual(sortIds(ids(again)), enqueued)
      for (const job of again) assert.equal(job.attempts, 2)
    })

    test('ends an expired job as dead when it has no attempts left', async ({ store }) => {
      const t = Date.now()
      const [once, twice] = await enqueueJobs(store, t, [{ maxAttempts: 1 }, { maxAttempts: 2 }])
      await claimAt(store, t, { limit: 2, leaseMs: SECOND })
      assert.deepEqual(await store.recoverExpired({ now: t + 2 * SECOND }), {
        retried: [twice],
        dead: [once],
        clamped: 0,
        expired: [],
      })
      const dead = await getExisting(store, once!)
      assert.equal(dead.state, 'dead')
      assert.equal(dead.attempts, 1)
      assert.equal(dead.lastError?.kind, 'lease_expired')
      assert.equal(dead.finishedAt, t + 2 * SECOND)

      assert.deepEqual(ids(await claimAt(store, t + 2 * SECOND, { leaseMs: SECOND })), [twice])
      assert.deepEqual(await store.recoverExpired({ now: t + 4 * SECOND }), {
        retried: [],
        dead: [twice],
        clamped: 0,
        expired: [],
      })
      const last = await getExisting(store, twice!)
      assert.equal(last.state, 'dead')
      assert.equal(last.attempts, 2)
      assert.equal(last.lastError?.kind, 'lease_expired')
    })

    test('leaves jobs whose lease has not run out alone', async ({ store }) => {
      const t = Date.now()
      const [short, long] = await enqueueJobs(store, t, [{ priority: 1 }, { priority: 0 }])
      const [s] = await claimAt(store, t, { limit: 1, leaseMs: SECOND })
      const [l] = await claimAt(store, t, { limit: 1, leaseMs: 10 * SECOND })
      assert.deepEqual([s?.id, l?.id], [short, long])
      const before = view(await getExisting(store, long!))
      assert.deepEqual(await store.recoverExpired({ now: t + 10 * SECOND - 1 }), {
        retried: [short],
        dead: [],
        clamped: 0,
        expired: [],
      })
      assert.deepEqual(view(await getExisting(store, long!)), before)
      assert.deepEqual(
        (await store.settle({ settlements: [completed(l)], now: t + 10 * SECOND - 1 })).settled,
        ['ok'],
      )
    })

    test('recovers nothing when called again', async ({ store }) => {
      const t = Date.now()
      const id = await enqueueJob(store, t)
      await claimAt(store, t, { leaseMs: SECOND })
      assert.deepEqual(await store.recoverExpired({ now: t + MINUTE }), {
        retried: [id],
        dead: [],
        clamped: 0,
        expired: [],
      })
      const after = view(await getExisting(store, id))
      assert.deepEqual(await store.recoverExpired({ now: t + MINUTE }), {
        retried: [],
        dead: [],
        clamped: 0,
        expired: [],
      })
      assert.deepEqual(await store.recoverExpired({ now: t + HOUR }), {
        retried: [],
        dead: [],
        clamped: 0,
        expired: [],
      })
      assert.deepEqual(view(await getExisting(store, id)), after)
    })

    test('rejects the old lease token once the job is recovered', async ({ store }) => {
      const t = Date.now()
      await enqueueJob(store, t)
      const job = one(await claimAt(store, t, { leaseMs: SECOND }))
      await store.recoverExpired({ now: t + MINUTE })
      assert.deepEqual(await renewAt(store, t + MINUTE, job), ['lease_lost'])
      assert.deepEqual((await store.settle({ settlements: [completed(job)], now: t + MINUTE })).settled, [
        'lease_lost',
      ])
      const stored = await getExisting(store, job.id)
      assert.equal(stored.state, 'ready')
      assert.equal(stored.result ?? null, null)
    })

    test('recovers at most limit jobs per call', async ({ store }) => {
      const t = Date.now()
      const enqueued = await enqueueJobs(store, t, [{}, {}, {}])
      await claimAt(store, t, { limit: 3, leaseMs: SECOND })
      const first = await store.recoverExpired({ now: t + MINUTE, limit: 2 })
      assert.equal(first.retried.length + first.dead.length, 2)
      const second = await store.recoverExpired({ now: t + MINUTE, limit: 2 })
      assert.equal(second.retried.length + second.dead.length, 1)
      assert.deepEqual(sortIds([...first.retried, ...second.retried]), enqueued)
      assert.deepEqual(await store.recoverExpired({ now: t + MINUTE, limit: 2 }), {
        retried: [],
        dead: [],
        clamped: 0,
        expired: [],
      })
    })

    test('recovers only the leases given, each if still as seen and run out', async ({ store }) => {
      const t = Date.now()
      const [renewed, reclaimed, live, taken] = await enqueueJobs(store, t, [{}, {}, {}, {}])
      const jobs = await claimAt(store, t, { limit: 4, leaseMs: SECOND })
      const seen = jobs.map(({ id, leaseToken, leaseExpiresAt }) => ({ id, leaseToken, leaseExpiresAt }))
      const byId = new Map(jobs.map((job) => [job.id, job]))
      // Since they were seen: one renewed, one recovered and claimed again; one not expired yet.
      assert.deepEqual(await renewAt(store, t + 500, byId.get(renewed!)!, SECOND), ['ok'])
      assert.deepEqual(await store.recoverExpired({ now: t + SECOND, leases: [seen[1]!] }), {
        retried: [reclaimed],
        dead: [],
        clamped: 0,
        expired: [],
      })
      await claimAt(store, t + SECOND, { leaseMs: SECOND }, reclaimed)
      const notYet = { ...seen[2]!, leaseExpiresAt: seen[2]!.leaseExpiresAt }
      assert.deepEqual(await store.recoverExpired({ now: t + SECOND - 1, leases: [notYet] }), {
        retried: [],
        dead: [],
        clamped: 0,
        expired: [],
      })
      assert.deepEqual(
        await store.recoverExpired({ now: t + 2 * SECOND, leases: [seen[0]!, seen[1]!, seen[3]!] }),
        { retried: [taken], dead: [], clamped: 0, expired: [] },
        'only the one still as seen',
      )
      assert.equal((await getExisting(store, live!)).state, 'active')
      assert.equal((await getExisting(store, renewed!)).state, 'active')
      assert.deepEqual(await store.recoverExpired({ now: t + 2 * SECOND, leases: [] }), {
        retried: [],
        dead: [],
        clamped: 0,
        expired: [],
      })
    })

    test('recovers nothing when no job is active', async ({ store }) => {
      const t = Date.now()
      assert.deepEqual(await store.recoverExpired({ now: t }), {
        retried: [],
        dead: [],
        clamped: 0,
        expired: [],
      })
      await enqueueJobs(store, t, [{}, { delayMs: SECOND }])
      await finishNew(store, t, 'completed', { queue: 'done' })
      assert.deepEqual(await store.recoverExpired({ now: t + HOUR }), {
        retried: [],
        dead: [],
        clamped: 0,
        expired: [],
      })
    })
  })

  describe('findExpiredLeases', () => {
    test('lists active jobs whose lease ran out, oldest expiry first, with the store clock and each lease', async ({
      store,
    }) => {
      const t = Date.now()
      const [first, second, live] = await enqueueJobs(store, t, [{ priority: 2 }, { priority: 1 }, {}])
      const [a] = await claimAt(store, t, { limit: 1, leaseMs: 2 * SECOND })
      const [b] = await claimAt(store, t + 100, { limit: 1, leaseMs: SECOND })
      await claimAt(store, t, { limit: 1, leaseMs: HOUR }, live)
      assert.deepEqual(await store.findExpiredLeases({ now: t + 2 * SECOND }), {
        now: t + 2 * SECOND,
        nextExpiresAt: t + HOUR,
        startDeadlinesPassed: false,
        leases: [
          { id: second, leaseToken: b!.leaseToken, leaseExpiresAt: t + 100 + SECOND, leaseMs: SECOND },
          { id: first, leaseToken: a!.leaseToken, leaseExpiresAt: t + 2 * SECOND, leaseMs: 2 * SECOND },
        ],
      })
      assert.deepEqual((await store.findExpiredLeases({ now: t + 2 * SECOND, limit: 1 })).leases.length, 1)
      // A renewal sets the length it was asked for.
      assert.deepEqual(await renewAt(store, t + 2 * SECOND, a!, 3 * SECOND), ['ok'])
      const later = await store.findExpiredLeases({ now: t + 10 * SECOND })
      assert.deepEqual(
        later.leases.map(({ id, leaseMs }) => ({ id, leaseMs })),
        [
          { id: second, leaseMs: SECOND },
          { id: first, leaseMs: 3 * SECOND },
        ],
      )
      // Read only: nothing was recovered.
      assert.equal((await getExisting(store, first!)).state, 'active')
    })

    test("reads the store's own clock when no now is given", async ({ store }) => {
      const before = Date.now()
      const { now, leases, nextExpiresAt } = await store.findExpiredLeases()
      // Server stores read their server's clock: allow for a small difference from this host's.
      assert.ok(Math.abs(now - before) < 5 * SECOND, `now ${now} is near ${before}`)
      assert.deepEqual(leases, [])
      assert.equal(nextExpiresAt, null)
    })
  })

  describe('recoverExpired with clampLeases', () => {
    test('brings leases renewed in the future (the clock went back) to their own length from now', async ({
      store,
    }) => {
      const t = Date.now()
      const [stale, fresh] = await enqueueJobs(store, t, [{ priority: 1 }, {}])
      await claimAt(store, t, { limit: 1, leaseMs: 10 * SECOND }, stale)
      const back = t - HOUR
      await claimAt(store, back, { limit: 1, leaseMs: 20 * SECOND }, fresh)
      const freshBefore = view(await getExisting(store, fresh!))
      assert.equal(await clampLeases(store, { now: back + SECOND }), 1)
      assert.equal((await getExisting(store, stale!)).leaseExpiresAt, back + SECOND + 10 * SECOND)
      assert.deepEqual(view(await getExisting(store, fresh!)), freshBefore, 'a lease set before now is kept')
      assert.equal(await clampLeases(store, { now: back + SECOND }), 0)
      assert.deepEqual(await store.recoverExpired({ now: back + 11 * SECOND }), {
        retried: [stale],
        dead: [],
        clamped: 0,
        expired: [],
      })
    })

    test('clamps first, then recovers what ran out, in the same call', async ({ store }) => {
      const t = Date.now()
      const [ahead, expired] = await enqueueJobs(store, t, [{ priority: 1 }, {}])
      await claimAt(store, t, { limit: 1, leaseMs: 10 * SECOND }, ahead)
      const back = t - HOUR
      await claimAt(store, back, { limit: 1, leaseMs: SECOND }, expired)
      assert.deepEqual(await store.recoverExpired({ now: back + 2 * SECOND, clampLeases: true }), {
        retried: [expired],
        dead: [],
        clamped: 1,
        expired: [],
      })
      assert.equal((await getExisting(store, ahead!)).leaseExpiresAt, back + 2 * SECOND + 10 * SECOND)
    })
  })
}
