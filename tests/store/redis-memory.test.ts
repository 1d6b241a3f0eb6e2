/**
 * What a waiting job costs in Redis memory: MEMORY USAGE (every element counted, SAMPLES 0) over
 * every key of a namespace holding 2,000 ready jobs with a 520-byte payload, divided by the job
 * count. The figure is printed as a diagnostic and recorded by `npm run bench -- --scenario
 * redis-memory`; the test holds it under a bound, so a layout change that doubles it fails.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Redis } from 'ioredis'

import { createClient } from '../../src/client/client.js'
import { measureRedisMemory } from '../../bench/lib/redis-memory.js'
import { defer } from '../support/cleanup.js'
import { redisUnreachableReason, tempNamespace, TEST_REDIS_URL } from '../support/redis-harness.js'
import { whenAvailable } from '../support/services.js'

const JOBS = 2000
const PAYLOAD = { text: 'x'.repeat(509) } // 520 bytes of JSON
/** Bytes per waiting job the layout must stay under: 1,554 measured with Redis 7.0 defaults (1,420 before
 * each ready job was also in its name's ready zset). */
const BOUND = 2000

await whenAvailable(redisUnreachableReason(), () => {
  describe('RedisStore memory', () => {
    it(`keeps a waiting job with a 520-byte payload under ${BOUND} bytes`, async (t) => {
      assert.equal(JSON.stringify(PAYLOAD).length, 520)
      const { store } = await tempNamespace(t, 'memory')
      const client = createClient({ store })
      defer(t, () => client.close())
      for (let i = 0; i < JOBS; i += 500) {
        await client.enqueueMany(
          Array.from({ length: 500 }, () => ({ name: 'memory.job', payload: PAYLOAD })),
        )
      }
      const redis = new Redis(TEST_REDIS_URL)
      try {
        const { bytesPerJob, byKind } = await measureRedisMemory(redis, store.keys.pattern, JOBS)
        t.diagnostic(`${bytesPerJob.toFixed(0)} bytes per waiting job: ${JSON.stringify(byKind)}`)
        assert.ok(bytesPerJob < BOUND, `${bytesPerJob.toFixed(0)} bytes per waiting job`)
      } finally {
        redis.disconnect()
      }
    })
  })
})
