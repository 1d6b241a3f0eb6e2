import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { SCENARIOS } from '../bench/lib/registry.js'
import { storeOf, type BenchStoreKind } from '../bench/lib/types.js'
import { postgresUnreachableReason } from './support/postgres-harness.js'
import { redisServerMissingReason } from './support/redis-harness.js'
import { skipUnlessAvailable } from './support/services.js'

// Benchmarks report numbers; this only checks that every scenario still runs and measures
// something, so they never rot. No timing is asserted.

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RESULTS = new URL('../bench/RESULTS.md', import.meta.url)

/** Why the scenarios of a store cannot run here, or null (tests/support/services.ts applies the rule). */
const MISSING: Partial<Record<BenchStoreKind, () => Promise<string | null>>> = {
  postgres: postgresUnreachableReason,
  // The Redis scenarios start a redis-server of their own: they need its binary, not the shared server.
  redis: async () => redisServerMissingReason(),
}

test('every benchmark scenario runs at a tiny size', async (t) => {
  const checks = new Map<BenchStoreKind, Promise<string | null>>()
  for (const scenario of SCENARIOS) {
    const store = storeOf(scenario)
    const check = MISSING[store]
    if (!checks.has(store)) checks.set(store, check === undefined ? Promise.resolve(null) : check())
    let skip: string | undefined
    let failure: unknown = null
    try {
      skip = skipUnlessAvailable(await checks.get(store)!).skip
    } catch (error) {
      failure = error
    }
    await t.test(scenario.name, { skip }, async () => {
      if (failure !== null) throw failure
      const figures = await scenario.run(scenario.quickSize)
      assert.ok(figures.length > 0, 'measured nothing')
      const keys = figures.map((figure) => figure.key)
      assert.equal(new Set(keys).size, keys.length, `duplicate figure keys: ${keys.join(', ')}`)
      for (const figure of figures) {
        // Some figures are honestly 0 at times: an idle process can use no clock tick in a quick
        // run's 2 s, and its threads may not wake at all (redis-idle-cpu did so in CI).
        // A difference of two measurements may be negative (bench/lib/types.ts, mayBeNegative).
        const least =
          figure.mayBeNegative === true ? -Infinity : figure.mayBeZero === true ? 0 : Number.MIN_VALUE
        assert.ok(
          Number.isFinite(figure.value) && figure.value >= least,
          `${figure.label}: ${figure.value} is not a finite ${least === 0 ? 'non-negative' : least < 0 ? '' : 'positive'} number`,
        )
      }
      for (const key of Object.keys(scenario.targets)) {
        assert.ok(keys.includes(key), `target for ${key}, which the scenario does not measure`)
      }
    })
  }
})

test('a quick run prints the table and leaves RESULTS.md alone', async () => {
  const before = readFileSync(RESULTS, 'utf8')
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'bench/run.ts', '--quick', '--runs', '1', '--scenario', 'enqueue-1k,fsync-rate'],
    { cwd: ROOT },
  )
  assert.match(stdout, /^\| scenario \| figure \| median \|/m)
  assert.match(stdout, /^\| enqueue-1k \| 100 concurrent enqueues \|/m)
  assert.match(stdout, /^\| fsync-rate \|/m)
  assert.doesNotMatch(stdout, /^\| enqueue-bulk \|/m)
  // The Store lines name the stores these scenarios use, and only those.
  assert.match(stderr, /^Store: sqlite \(better-sqlite3 /m)
  assert.doesNotMatch(stderr, /^Store: postgres/m)
  assert.equal(readFileSync(RESULTS, 'utf8'), before)
})
