import { redisHarness, whenRedisReachable } from '../helpers/redis-harness.js'
import { runStoreConformance } from './store.case.js'

await whenRedisReachable(() =>
  runStoreConformance({ name: 'RedisStore', createHarness: redisHarness('conformance'), skip: [] }),
)
