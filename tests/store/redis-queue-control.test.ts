/**
 * Queue control on Redis beyond the conformance suite: how it is kept (lua/control.lua: a hash per
 * queue with a setting, a set of those queues, and a limited queue's leases zset), that a queue
 * left without settings leaves no key behind, and that a limit counts a lease for as long as its
 * renewals keep it alive.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Redis } from 'ioredis'

import type { RedisStore } from '../../src/redis.js'
import { newJob } from '../support/store-harness.js'
import { defer } from '../support/cleanup.js'
import { redisUnreachableReason, tempNamespace, TEST_REDIS_URL } from '../support/redis-harness.js'
import { whenAvailable } from '../support/services.js'

const LEASE_MS = 30_000
const CLAIM = { queues: ['api'], limit: 10, leaseMs: LEASE_MS, workerId: 'w' }

/** Every key of the store's namespace (SCAN: the test server is shared). */
async function namespaceKeys(redis: Redis, store: RedisStore): Promise<string[]> {
  const found: string[] = []
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', store.keys.pattern, 'COUNT', 1000)
    cursor = next
    found.push(...keys)
  } while (cursor !== '0')
  return found.sort()
}

/** The namespace's queue control keys, and the jobs whose hash marks their lease as counted. */
async function controlKeys(redis: Redis, store: RedisStore): Promise<{ keys: string[]; marked: string[] }> {
  const all = await namespaceKeys(redis, store)
  const keys = all.filter((key) => /:(queue-controls|queue-control:.*|leases:.*)$/.test(key))
  const marked: string[] = []
  for (const key of all.filter((key) => key.startsWith(store.keys.job('')))) {
    if ((await redis.hget(key, 'lq')) !== null) marked.push(key)
  }
  return { keys, marked }
}

await whenAvailable(redisUnreachableReason(), () => {
  describe('RedisStore queue control', () => {
    it('keeps a setting in the queue’s hash and the set, and leaves no key once the queue has none', async (t) => {
      const { store } = await tempNamespace(t, 'queue-control')
      const redis = new Redis(TEST_REDIS_URL)
      defer(t, () => redis.disconnect())
      const t0 = Date.now()
      await store.enqueue({ jobs: [newJob({ queue: 'api' }), newJob({ queue: 'api' })], now: t0 })
      const [running] = await store.claim({ ...CLAIM, limit: 1, now: t0 })
      await store.control({ pause: { queue: 'api', by: 'ops', reason: '' }, now: t0 })
      await store.control({ limit: { queue: 'api', concurrency: 2 } })
      assert.deepEqual(await redis.hgetall(store.keys.queueControl('api')), {
        paused_at: String(t0),
        paused_by: 'ops',
        pause_reason: '',
        concurrency: '2',
      })
      assert.deepEqual(await redis.smembers(store.keys.queueControls), ['api'])
      // The job that was running when the limit came is counted from then on.
      assert.deepEqual(await redis.zrange(store.keys.leases('api'), '0', '-1'), [running!.id])
      assert.equal((await store.control()).queues[0]?.paused?.reason, '', 'an empty reason stays one')

      await store.control({ resume: { queue: 'api' } })
      await store.control({ limit: { queue: 'api', clear: true } })
      assert.deepEqual(await controlKeys(redis, store), { keys: [], marked: [] })
      assert.deepEqual((await store.control()).queues, [])
    })

    it('counts a lease against the limit for as long as renewals keep it, and frees it when it ends', async (t) => {
      const { store } = await tempNamespace(t, 'queue-control-renew')
      const redis = new Redis(TEST_REDIS_URL)
      defer(t, () => redis.disconnect())
      const t0 = Date.now()
      await store.control({ limit: { queue: 'api', concurrency: 1 } })
      await store.enqueue({ jobs: [newJob({ queue: 'api' }), newJob({ queue: 'api' })], now: t0 })
      const [held] = await store.claim({ ...CLAIM, now: t0 })
      const renewedAt = t0 + LEASE_MS - 1
      assert.deepEqual(await store.renew({ leases: [held!], leaseMs: LEASE_MS, now: renewedAt }), ['ok'])
      assert.deepEqual(
        await store.claim({ ...CLAIM, now: t0 + LEASE_MS + 1 }),
        [],
        'past the first lease: renewed',
      )
      assert.equal(await store.cancel({ ids: [held!.id], now: renewedAt }), 1)
      assert.equal((await store.claim({ ...CLAIM, now: renewedAt })).length, 1, 'cancelled: room again')
      const marked = await controlKeys(redis, store)
      assert.equal(marked.marked.length, 1, 'only the running job is counted')
      assert.equal(await redis.zcard(store.keys.leases('api')), 1)
    })
  })
})
