/**
 * Groups and start deadlines on Redis beyond the conformance suite: how they are kept (the 'g' and
 * 'x' fields, the deadlines zset of unstarted jobs, a queue's expired set), that a job without
 * either leaves nothing of them behind, that a claim never leases a job past its deadline even
 * beyond the bound of its sweep (with and without names), that an enqueue's delivery skips one,
 * and that the expired count follows retry and purge.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Redis } from 'ioredis'

import { EXPIRED_ERROR } from '../../src/store/kernel/jobs.js'
import type { RedisStore } from '../../src/redis.js'
import { getJob } from '../support/store-calls.js'
import { newJob } from '../support/store-harness.js'
import { defer } from '../support/cleanup.js'
import {
  openTestStore,
  redisUnreachableReason,
  tempNamespace,
  TEST_REDIS_URL,
} from '../support/redis-harness.js'
import { whenAvailable } from '../support/services.js'

const MINUTE = 60_000
const LEASE_MS = 30_000
const CLAIM = { queues: ['api'], limit: 10, leaseMs: LEASE_MS, workerId: 'w' }
/** lua/lib/claim-core.lua's EXPIRE_PER_CLAIM. */
const EXPIRE_PER_CLAIM = 1000

async function admin(t: Parameters<typeof tempNamespace>[0]): Promise<Redis> {
  const redis = new Redis(TEST_REDIS_URL)
  defer(t, () => redis.disconnect())
  return redis
}

await whenAvailable(redisUnreachableReason(), () => {
  describe('RedisStore groups and start deadlines', () => {
    it('keeps g and x only on the jobs that have them, and a deadline in the zset only while unstarted', async (t) => {
      const { store } = await tempNamespace(t, 'deadlines-keys')
      const redis = await admin(t)
      const t0 = Date.now()
      const [plain, grouped, expiring] = await store.enqueue({
        jobs: [
          newJob({ queue: 'api' }),
          // Commas and multi-byte characters in both free-text fields.
          newJob({ queue: 'api', group: 'a,b ✓,', uniqueKey: 'k,1 ✓' }),
          newJob({ queue: 'api', expiresInMs: MINUTE, delayMs: 1000 }),
        ],
        now: t0,
      })
      const fields = async (id: string): Promise<string[]> =>
        Object.keys(await redis.hgetall(store.keys.job(id))).filter((field) => field === 'g' || field === 'x')
      assert.deepEqual(await fields(plain!.id), [])
      assert.deepEqual(await fields(grouped!.id), ['g'])
      assert.equal((await getJob(store, grouped!.id))?.group, 'a,b ✓,')
      assert.equal((await getJob(store, grouped!.id))?.uniqueKey, 'k,1 ✓')
      assert.deepEqual(await fields(expiring!.id), ['x'])
      assert.deepEqual(await redis.zrange(store.keys.deadlines, '0', '-1', 'WITHSCORES'), [
        expiring!.id,
        String(t0 + MINUTE),
      ])

      // Claimed: out of the zset; put back by a failed attempt: in again, still bound by it.
      const claimed = await store.claim({ ...CLAIM, now: t0 + 1000 })
      assert.deepEqual(
        claimed.map((job) => job.id),
        [plain!.id, grouped!.id, expiring!.id],
      )
      assert.equal(await redis.exists(store.keys.deadlines), 0)
      const job = claimed[2]!
      await store.settle({
        settlements: [
          {
            kind: 'retry',
            id: job.id,
            leaseToken: job.leaseToken,
            runAt: t0 + 2000,
            error: { kind: 'error', message: 'x' },
          },
        ],
        now: t0 + 1000,
      })
      assert.equal(await redis.zscore(store.keys.deadlines, job.id), String(t0 + MINUTE))
      assert.equal(await store.cancel({ ids: [job.id], now: t0 + 1000 }), 1)
      assert.equal(await redis.exists(store.keys.deadlines), 0, 'cancelled: out of the zset')
      assert.equal((await store.stats({ now: t0 + 1000 }))[0]?.expired, 0, 'a cancel is not an expiry')
      // The flag that spares claims a look at the zset while no job has a deadline goes with it,
      // at the next claim.
      const hasScheduled = `${store.keys.root}has-scheduled`
      assert.equal(await redis.sismember(hasScheduled, '+deadlines'), 1)
      await store.claim({ ...CLAIM, now: t0 + 1000 })
      assert.equal(await redis.sismember(hasScheduled, '+deadlines'), 0)
    })

    for (const names of [undefined, ['test-job']]) {
      it(`never leases a job past its deadline beyond the claim's sweep (names: ${names ? 'yes' : 'no'})`, async (t) => {
        const { store } = await tempNamespace(t, 'deadlines-bound')
        const redis = await admin(t)
        const t0 = Date.now()
        // The sweep takes the earliest deadlines first: another queue's fill it.
        await store.enqueue({
          jobs: Array.from({ length: EXPIRE_PER_CLAIM }, () => newJob({ queue: 'other', expiresAt: t0 + 1 })),
          now: t0,
        })
        const late = await store.enqueue({
          jobs: [
            newJob({ queue: 'api', expiresAt: t0 + 2, priority: 1 }),
            newJob({ queue: 'api', expiresAt: t0 + 2, priority: 1 }),
            newJob({ queue: 'api' }),
          ],
          now: t0,
        })
        const claimed = await store.claim({ ...CLAIM, names, now: t0 + MINUTE })
        assert.deepEqual(
          claimed.map((job) => job.id),
          [late[2]!.id],
        )
        for (const { id } of late.slice(0, 2)) {
          const job = await getJob(store, id)
          assert.equal(job?.state, 'dead')
          assert.deepEqual(job?.lastError, EXPIRED_ERROR)
          assert.equal(job?.attempts, 0)
        }
        assert.equal(await redis.exists(store.keys.deadlines), 0)
        const stats = await store.stats({ now: t0 + MINUTE })
        assert.deepEqual(
          stats.map(({ queue, dead, expired }) => [queue, dead, expired]),
          [
            ['api', 2, 2],
            ['other', EXPIRE_PER_CLAIM, EXPIRE_PER_CLAIM],
          ],
        )
        // No ready entry of the expired jobs is left, in the queue's zset or its name's.
        assert.equal(await redis.zcard(`${store.keys.root}ready:api test-job`), 0)
        assert.equal(await redis.zcard(`${store.keys.root}ready:api`), 0)
      })
    }

    it("ends a scheduled queue's expired jobs and clears its flag, and counts them until retried or purged", async (t) => {
      const { store } = await tempNamespace(t, 'deadlines-count')
      const redis = await admin(t)
      const t0 = Date.now()
      const [a, b] = await store.enqueue({
        jobs: [
          newJob({ queue: 'api', delayMs: 1000, expiresInMs: 2000 }),
          newJob({ queue: 'api', delayMs: 1000, expiresInMs: 2000 }),
        ],
        now: t0,
      })
      const result = await store.recoverExpired({ now: t0 + 2000, expireJobs: true, limit: 10 })
      assert.deepEqual(result.expired, [a!.id, b!.id])
      assert.equal(await redis.sismember(`${store.keys.root}has-scheduled`, 'api'), 0)
      assert.deepEqual((await redis.smembers(store.keys.expired('api'))).sort(), [a!.id, b!.id].sort())
      assert.equal((await store.stats({ now: t0 + 2000 }))[0]?.expired, 2)

      assert.equal(await store.retry({ ids: [a!.id], now: t0 + 3000 }), 1)
      assert.equal((await store.stats({ now: t0 + 3000 }))[0]?.expired, 1, 'retried: not counted')
      assert.equal(await redis.exists(store.keys.deadlines), 0, 'retried: no deadline')
      assert.equal(await store.purge({ state: 'dead', now: t0 + 3000 }), 1)
      assert.equal(await redis.exists(store.keys.expired('api')), 0, 'purged: not counted')
    })

    it("hands a waiter none of an enqueue's jobs past their deadline", async (t) => {
      const { store, namespace } = await tempNamespace(t, 'deadlines-deliver')
      const peer = await openTestStore(namespace)
      defer(t, () => peer.close())
      const claim = { limit: 5, leaseMs: LEASE_MS, workerId: 'waiter' }
      for (let attempt = 1; ; attempt++) {
        const waiting = store.waitForWork({ queues: ['api'], timeoutMs: 5000, claim })
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt))
        const now = Date.now()
        const [expired, plain] = await peer.enqueue({
          jobs: [newJob({ queue: 'api', expiresAt: now - 1 }), newJob({ queue: 'api' })],
          now,
        })
        const wake = await waiting
        if (wake.reason !== 'delivered') {
          assert.ok(attempt < 5, 'no wait was registered in time in 5 attempts')
          await cleared(store, now)
          continue
        }
        assert.deepEqual(
          wake.jobs.map((job) => job.id),
          [plain!.id],
        )
        assert.deepEqual((await getJob(store, expired!.id))?.lastError, EXPIRED_ERROR)
        break
      }
    })
  })
})

/** Claims what a wait that was not registered in time left ready, so the next attempt starts clean. */
async function cleared(store: RedisStore, now: number): Promise<void> {
  await store.claim({ ...CLAIM, limit: 100, now })
}
