import { redisHarness, redisUnreachableReason } from '../helpers/redis-harness.js'
import { whenAvailable } from '../helpers/services.js'
import { runStoreConformance } from './store.case.js'

await whenAvailable(redisUnreachableReason(), () =>
  runStoreConformance({ name: 'RedisStore', createHarness: redisHarness('conformance'), skip: [] }),
)
