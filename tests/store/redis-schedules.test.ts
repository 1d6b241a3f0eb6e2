/**
 * Schedules and a job's meta on Redis beyond the conformance suite: how they are kept (a hash per
 * schedule listed in a zset, the store's version beside the stop request, the meta one job field
 * that a plain job does not have), that only a change that changes something publishes a wake-up,
 * and that a fire treats a last job whose hash is gone as finished.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Redis } from 'ioredis'

import { firedJob, normalizeSchedule, type ScheduleDefinition } from '../../src/core/schedule.js'
import { metaOf } from '../../src/store/kernel/job-meta.js'
import { newJob } from '../support/store-harness.js'
import { defer } from '../support/cleanup.js'
import { redisUnreachableReason, tempNamespace, TEST_REDIS_URL } from '../support/redis-harness.js'
import { whenAvailable } from '../support/services.js'

const T = 1_800_000_000_000
const HOUR = 3_600_000

/** A schedule with the defaults a user gets (core/schedule.ts), but for what `overrides` sets. */
function definition(id: string, overrides: Partial<ScheduleDefinition> = {}): ScheduleDefinition {
  return { ...normalizeSchedule({ id, cron: '0 * * * *', job: { name: 'report' } }), ...overrides }
}

await whenAvailable(redisUnreachableReason(), () => {
  describe('RedisStore schedules', () => {
    it("keeps a schedule as a hash of the kernel's columns in the schedules zset; a removed one leaves only the version", async (t) => {
      const { store } = await tempNamespace(t, 'schedules-keys')
      const redis = new Redis(TEST_REDIS_URL)
      defer(t, () => redis.disconnect())
      const def = definition('nightly')
      await store.schedules({ put: [def], now: T })
      assert.deepEqual(await redis.hgetall(store.keys.schedule('nightly')), {
        id: 'nightly',
        cron: def.cron,
        time_zone: 'UTC',
        job: JSON.stringify(def.job),
        missed: 'skip',
        overlap: 'allow',
        last_slot: String(T),
        version: '1',
        created_at: String(T),
        updated_at: String(T),
      })
      assert.deepEqual(await redis.zrange(store.keys.schedules, '0', '-1'), ['nightly'])
      assert.equal(await redis.get(store.keys.schedulesVersion), '1')

      await store.schedules({ pause: ['nightly'], now: T + 1 })
      assert.equal(await redis.hget(store.keys.schedule('nightly'), 'paused_at'), String(T + 1))
      await store.schedules({ resume: ['nightly'], now: T + 2 })
      assert.equal(
        await redis.hexists(store.keys.schedule('nightly'), 'paused_at'),
        0,
        'null is an absent field',
      )

      await store.schedules({ remove: ['nightly'] })
      assert.equal(await redis.exists(store.keys.schedule('nightly'), store.keys.schedules), 0)
      assert.equal(await redis.get(store.keys.schedulesVersion), '4')
      assert.equal((await store.control()).schedulesVersion, 4)
    })

    it('publishes one wake-up per call that changes something, and none for one that changes nothing', async (t) => {
      const { store } = await tempNamespace(t, 'schedules-wake')
      const subscriber = new Redis(TEST_REDIS_URL)
      defer(t, () => subscriber.disconnect())
      const messages: string[] = []
      subscriber.on('smessage', (_channel: string, message: string) => messages.push(message))
      await subscriber.ssubscribe(store.keys.channel)
      const changed = { put: [definition('a'), definition('b')], pause: ['a'], now: T }
      const { version } = await store.schedules(changed)
      await store.schedules(changed)
      await store.schedules({ pause: ['nope'], remove: ['nope'] })
      await store.schedules()
      // A round trip on the subscriber's connection: the messages published before it have come.
      await subscriber.call('PING')
      assert.deepEqual(messages, ['v'])
      assert.equal((await store.schedules()).version, version, 'one change, one version')
    })

    it('overlap skip: a last job purged since counts as finished, and the next slot fires', async (t) => {
      const { store } = await tempNamespace(t, 'schedules-purged')
      const { schedules } = await store.schedules({ put: [definition('s', { overlap: 'skip' })], now: T })
      const schedule = schedules[0]!
      const fire = (from: typeof schedule, slot: number): Parameters<typeof store.fireSchedule>[0] => ({
        id: 's',
        version: from.version,
        lastSlot: from.lastSlot,
        toSlot: slot,
        jobs: [firedJob('s', from.job, slot, false)],
        now: slot,
      })
      const first = await store.fireSchedule(fire(schedule, T + HOUR))
      assert.equal(first.outcome, 'fired')
      const [job] = await store.claim({
        queues: ['default'],
        limit: 1,
        leaseMs: 30_000,
        workerId: 'w',
        now: T + HOUR,
      })
      await store.settle({ settlements: [{ kind: 'completed', id: job!.id, leaseToken: job!.leaseToken }] })
      assert.equal(await store.purge({ state: 'completed' }), 1)
      const after = (await store.schedules()).schedules[0]!
      assert.equal(after.lastJobId, job!.id)
      assert.equal((await store.fireSchedule(fire(after, T + 2 * HOUR))).outcome, 'fired')
    })
  })

  describe('RedisStore job meta', () => {
    it("is one hash field, 'm', that a plain job does not have", async (t) => {
      const { store } = await tempNamespace(t, 'job-meta')
      const redis = new Redis(TEST_REDIS_URL)
      defer(t, () => redis.disconnect())
      const backoff = { type: 'fixed', delayMs: 5000 } as const
      const schedule = { id: 'nightly', slot: T, late: false }
      const [plain, own, fired] = await store.enqueue({
        jobs: [newJob(), newJob({ backoff, group: 'g,1' }), newJob({ schedule, uniqueKey: 'k,2' })],
        now: T,
      })
      assert.deepEqual((await redis.hkeys(store.keys.job(plain!.id))).sort(), [
        'c',
        'ma',
        'n',
        'p',
        'pr',
        'q',
        'ra',
        's',
      ])
      assert.equal(
        await redis.hget(store.keys.job(own!.id), 'm'),
        metaOf({ schedule: null, backoff, keepForMs: null }),
      )
      assert.equal(
        await redis.hget(store.keys.job(own!.id), 'g'),
        'g,1',
        'the group beside the meta is whole',
      )
      assert.equal(
        await redis.hget(store.keys.job(fired!.id), 'm'),
        metaOf({ schedule, backoff: null, keepForMs: null }),
      )
      assert.equal(await redis.hget(store.keys.job(fired!.id), 'uk'), 'k,2')
    })
  })
})
