// Import this first (a static import, or `--import` before anything else): from then on,
// `import … from 'ioredis'` loads ioredis 5 (ioredis5-hooks.mjs). Modules loaded before it keep
// the ioredis they got, so a test file that imports this loads the rest of its code dynamically.
// `npm test` runs the Redis conformance suites once more this way (tests/conformance/
// store.redis.ioredis5.test.ts); FERRY_TEST_IOREDIS=5 puts every process of a run on ioredis 5
// (scripts/run-tests.mjs).
import { register } from 'node:module'

register('./ioredis5-hooks.mjs', import.meta.url)
