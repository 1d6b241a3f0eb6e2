/**
 * Queue limits on Redis beyond the conformance suite: the keys they are kept in (lua/lib/
 * prelude.lua: start logs, group leases, the grouped ready zsets and the groups with ready jobs),
 * that every path that makes a grouped job ready or takes it out of line keeps them, that none is
 * left behind once the limits are cleared or the jobs gone, that key layout 4 moves the grouped
 * ready jobs of an older namespace, and that waiters sleep while every group is at its limit.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Redis } from 'ioredis'

import type { RedisStore } from '../../src/redis.js'
import { KEY_LAYOUTS } from '../../src/store/redis/redis-scripts.js'
import type { ClaimedJob } from '../../src/core/job.js'
import { newJob } from '../support/store-harness.js'
import { defer } from '../support/cleanup.js'
import { redisUnreachableReason, tempNamespace, TEST_REDIS_URL } from '../support/redis-harness.js'
import { whenAvailable } from '../support/services.js'

const LEASE_MS = 30_000
const CLAIM = { queues: ['api'], limit: 10, leaseMs: LEASE_MS, workerId: 'w' }
const MINUTE = 60_000

/** Every key of the store's namespace (SCAN: the test server is shared), without its root. */
async function namespaceKeys(redis: Redis, store: RedisStore): Promise<string[]> {
  const found: string[] = []
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', store.keys.pattern, 'COUNT', 1000)
    cursor = next
    found.push(...keys.map((key) => key.slice(store.keys.root.length)))
  } while (cursor !== '0')
  return found.sort()
}

/** The keys of the grouped ready jobs, of limits and of start logs (not jobs, indexes or flags). */
async function limitKeys(redis: Redis, store: RedisStore): Promise<string[]> {
  return (await namespaceKeys(redis, store)).filter((key) =>
    /^(group-ready|groups|starts|start-groups|leases|queue-control):/.test(key),
  )
}

async function markedJobs(redis: Redis, store: RedisStore, field: string): Promise<string[]> {
  const marked: string[] = []
  for (const key of await namespaceKeys(redis, store)) {
    if (key.startsWith('job:') && (await redis.hget(store.keys.root + key, field)) !== null) marked.push(key)
  }
  return marked
}

function completed(job: ClaimedJob): { kind: 'completed'; id: string; leaseToken: string } {
  return { kind: 'completed', id: job.id, leaseToken: job.leaseToken }
}

async function connect(t: Parameters<typeof tempNamespace>[0]): Promise<Redis> {
  const redis = new Redis(TEST_REDIS_URL)
  defer(t, () => redis.disconnect())
  return redis
}

await whenAvailable(redisUnreachableReason(), () => {
  describe('RedisStore queue limits', () => {
    it('keeps start logs and group leases while the limits are set, and leaves no key once they are cleared', async (t) => {
      const { store } = await tempNamespace(t, 'limits-keys')
      const redis = await connect(t)
      const t0 = Date.now()
      await store.enqueue({
        jobs: [
          newJob({ queue: 'api', group: 'a b' }),
          newJob({ queue: 'api', group: 'c' }),
          newJob({ queue: 'api' }),
        ],
        now: t0,
      })
      // A job claimed before the group limit is counted once it comes.
      const [early] = await store.claim({ ...CLAIM, limit: 1, now: t0 })
      assert.equal(early?.group, null, 'the jobs without a group come first in the rotation')
      await store.control({
        limit: {
          queue: 'api',
          rate: { limit: 5, perMs: MINUTE },
          groupRate: { limit: 1, perMs: MINUTE },
          groupConcurrency: 1,
        },
      })
      const claimed = await store.claim({ ...CLAIM, now: t0 })
      assert.deepEqual(claimed.map((job) => job.group).sort(), ['a b', 'c'])
      assert.deepEqual(await limitKeys(redis, store), [
        'leases:api a b',
        'leases:api c',
        'queue-control:api',
        'start-groups:api',
        'starts:api',
        'starts:api a b',
        'starts:api c',
      ])
      assert.equal(await redis.zcard(store.keys.groupStarts('api', 'a b')), 1)
      assert.deepEqual((await markedJobs(redis, store, 'lg')).length, 2)
      // A renewal moves the group's lease too.
      const held = claimed[0]!
      await store.renew({ leases: [held], leaseMs: LEASE_MS, now: t0 + 1000 })
      assert.equal(
        Number(await redis.zscore(store.keys.groupLeases('api', held.group!), held.id)),
        t0 + 1000 + LEASE_MS,
      )

      await store.control({ limit: { queue: 'api', groupConcurrency: null } })
      assert.deepEqual(await markedJobs(redis, store, 'lg'), [], 'group leases dropped with the limit')
      await store.control({ limit: { queue: 'api', rate: null } })
      assert.ok(
        (await limitKeys(redis, store)).includes('starts:api'),
        'logs kept while a group rate is left',
      )
      await store.control({ limit: { queue: 'api', clear: true } })
      assert.deepEqual(await limitKeys(redis, store), [])
      assert.deepEqual((await store.control()).queues, [])
    })

    it('keeps grouped jobs in their groups through every path in and out of line, and no key once they are gone', async (t) => {
      const { store } = await tempNamespace(t, 'limits-paths')
      const redis = await connect(t)
      const t0 = Date.now()
      const jobs = (
        await store.enqueue({
          jobs: [
            newJob({ queue: 'api', group: 'g' }), // cancelled while ready
            newJob({ queue: 'api', group: 'g', expiresAt: t0 + 10 }), // expires
            newJob({ queue: 'api', group: 'h', delayMs: 1000 }), // promoted by a claim
            newJob({ queue: 'api', group: 'h' }), // claimed, fails, retried
            newJob({ queue: 'api', group: 'k' }), // claimed, lease runs out, recovered
          ],
          now: t0,
        })
      ).map((result) => result.id)
      const [cancelled, expiring, delayed, failing, lost] = jobs as [string, string, string, string, string]
      assert.deepEqual(await redis.zrange(store.keys.groups('api'), '0', '-1'), ['g', 'h', 'k'])
      assert.deepEqual((await store.stats({ now: t0 })).find((row) => row.queue === 'api')?.ready, 4)

      assert.equal(await store.cancel({ ids: [cancelled], now: t0 }), 1)
      assert.equal(await redis.zcard(store.keys.groupReady('api', 'g')), 1)
      const recovered = await store.recoverExpired({ now: t0 + 20, expireJobs: true, leases: [] })
      assert.deepEqual(recovered.expired, [expiring])
      assert.deepEqual(
        await redis.zrange(store.keys.groups('api'), '0', '-1'),
        ['h', 'k'],
        'group g has no job left',
      )

      // Both groups served once each, the delayed job promoted into h on the way.
      const first = await store.claim({ ...CLAIM, limit: 2, now: t0 + 2000 })
      assert.deepEqual(first.map((job) => job.id).sort(), [failing, lost].sort())
      const failed = first.find((job) => job.id === failing)!
      await store.settle({
        settlements: [
          {
            kind: 'retry',
            id: failed.id,
            leaseToken: failed.leaseToken,
            runAt: t0 + 2000,
            error: { kind: 'error', message: 'again' },
          },
        ],
        now: t0 + 2000,
      })
      const back = await store.recoverExpired({ now: t0 + 2000 + LEASE_MS })
      assert.deepEqual(back.retried, [lost])
      assert.deepEqual(await redis.zrange(store.keys.groups('api'), '0', '-1'), ['h', 'k'])
      const rest = await store.claim({ ...CLAIM, now: t0 + 2000 + LEASE_MS })
      assert.deepEqual(rest.map((job) => job.id).sort(), [delayed, failing, lost].sort())
      // A dead job retried by an operator goes back into its group.
      const dead = rest.find((job) => job.id === delayed)!
      await store.settle({
        settlements: [
          { kind: 'dead', id: dead.id, leaseToken: dead.leaseToken, error: { kind: 'error', message: 'no' } },
        ],
      })
      assert.equal(await store.retry({ ids: [delayed] }), 1)
      assert.deepEqual(await redis.zrange(store.keys.groups('api'), '0', '-1'), ['h'])
      assert.deepEqual(
        (await store.claim({ ...CLAIM })).map((job) => job.id),
        [delayed],
      )

      assert.deepEqual(await limitKeys(redis, store), [], 'no grouped ready key left')
      assert.equal(await redis.exists(store.keys.hasGroups), 0)
      assert.equal(
        await redis.sismember(store.keys.root + 'has-ready', '+groups'),
        0,
        "the store's flag is cleared",
      )
      assert.equal(await redis.hget(store.keys.groupCursors, 'api'), 'h', 'the cursor stays')
    })

    it('key layout 4 moves the grouped ready jobs of an older namespace into their groups', async (t) => {
      const { store } = await tempNamespace(t, 'limits-migrate')
      const redis = await connect(t)
      const t0 = Date.now()
      const [grouped, plain] = (
        await store.enqueue({
          jobs: [newJob({ queue: 'api', group: 'g' }), newJob({ queue: 'api' })],
          now: t0,
        })
      ).map((result) => result.id)
      // As layout 3 kept it: every ready job in its queue's zsets, no group structures.
      const [member, score] = await redis.zrange(store.keys.groupReady('api', 'g'), '0', '0', 'WITHSCORES')
      await redis.del(
        store.keys.groupReady('api', 'g'),
        `${store.keys.root}group-ready:api/test-job g`,
        store.keys.groups('api'),
        `${store.keys.groups('api')}/test-job`,
        store.keys.hasGroups,
      )
      await redis.srem(store.keys.root + 'has-ready', '+groups')
      await redis.zadd(store.keys.root + 'ready:api', score!, member!)
      await redis.zadd(store.keys.root + 'ready:api test-job', score!, member!)
      await redis.set(store.keys.schema, '3')

      assert.deepEqual((await store.migrate()).applied, KEY_LAYOUTS.slice(3))
      assert.equal(await redis.zcard(store.keys.root + 'ready:api'), 1)
      assert.deepEqual(await redis.zrange(store.keys.groupReady('api', 'g'), '0', '-1'), [member])
      assert.equal(await redis.sismember(store.keys.hasGroups, 'api'), 1)
      // The rotation: the job without a group, then the group's.
      const claimed = await store.claim({ ...CLAIM, limit: 1, now: t0 })
      assert.deepEqual(
        claimed.map((job) => job.id),
        [plain],
      )
      assert.deepEqual(
        (await store.claim({ ...CLAIM, now: t0 })).map((job) => job.id),
        [grouped],
      )
    })

    it('a waiter sleeps while every group is at its concurrency, and a settlement that frees one wakes it', async (t) => {
      const { store } = await tempNamespace(t, 'limits-wait')
      await store.control({ limit: { queue: 'api', groupConcurrency: 1 } })
      await store.enqueue({ jobs: ['a', 'a', 'b', 'b'].map((group) => newJob({ queue: 'api', group })) })
      const claimed = await store.claim(CLAIM)
      assert.equal(claimed.length, 2)
      assert.equal(await waitReason(store, 300), 'timeout', 'both groups full: no work, no spin')
      const waiting = waitReason(store, 5000)
      await new Promise((resolve) => setTimeout(resolve, 100))
      await store.settle({ settlements: [completed(claimed[0]!)] })
      assert.equal(await waiting, 'notified')
      assert.equal((await store.claim(CLAIM)).length, 1)
    })

    it('a waiter whose groups are all at their rate wakes when the first window opens', async (t) => {
      const { store } = await tempNamespace(t, 'limits-wait-rate')
      await store.control({ limit: { queue: 'api', groupRate: { limit: 1, perMs: 400 } } })
      await store.enqueue({ jobs: ['a', 'a', 'b', 'b'].map((group) => newJob({ queue: 'api', group })) })
      assert.equal((await store.claim(CLAIM)).length, 2)
      const started = Date.now()
      assert.equal(await waitReason(store, 5000), 'due')
      assert.ok(Date.now() - started < 2000, 'woken by the window, not the timeout')
      assert.equal((await store.claim(CLAIM)).length, 2)
    })
  })
})

async function waitReason(store: RedisStore, timeoutMs: number): Promise<string> {
  return (await store.waitForWork({ queues: ['api'], timeoutMs })).reason
}
