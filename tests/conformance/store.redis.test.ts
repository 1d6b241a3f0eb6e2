import { ioredisVersion, redisHarness, redisUnreachableReason } from '../support/redis-harness.js'
import { whenAvailable } from '../support/services.js'
import { runStoreConformance } from './store.case.js'

await whenAvailable(redisUnreachableReason(), () =>
  runStoreConformance({
    // The client's version in the name: npm test runs this suite on ioredis 6 and on 5.
    name: `RedisStore (ioredis ${ioredisVersion()})`,
    createHarness: redisHarness('conformance'),
    skip: [],
  }),
)
