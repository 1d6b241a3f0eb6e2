/**
 * The Redis conformance suites again, on ioredis 5 instead of 6: Ferry's peer range takes both
 * majors (every BullMQ user has 5), so `npm test` proves both. ioredis 5 is the dev dependency
 * `ioredis5` (an npm alias). The first import redirects 'ioredis' for every module loaded after it,
 * which is why everything else here is loaded dynamically. FERRY_TEST_IOREDIS=5 npm test -- redis
 * runs every Redis test file on ioredis 5 (scripts/run-tests.mjs).
 */
import '../support/use-ioredis5.mjs'

import assert from 'node:assert/strict'
import { test } from 'node:test'

const { ioredisVersion } = await import('../support/redis-harness.js')

test('loads ioredis 5 for the suites below', () => {
  assert.match(ioredisVersion(), /^5\./)
})

await import('./store.redis.test.js')
await import('./store.redis-cluster.test.js')
