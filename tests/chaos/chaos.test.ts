/**
 * CI's chaos run: `npm run chaos` on each store of CHAOS_STORES (run-chaos.ts) for 20 s of faults
 * with a fixed seed, and the checker's verdict.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { CHAOS_STORES, runChaosMain, tableCount } from './run-chaos.js'

const SEED = '20261130'
const DURATION = '20s'
/** Faults, the drain (about 15 s here under load) and start-up, with room to spare. */
const TIMEOUT_MS = 240_000

for (const { store, skip } of CHAOS_STORES) {
  test(
    `${DURATION} of kills and freezes on ${store} (seed ${SEED}) break no invariant`,
    { skip, timeout: TIMEOUT_MS + 10_000 },
    async () => {
      const { code, output } = await runChaosMain(
        ['--store', store, '--duration', DURATION, '--seed', SEED],
        TIMEOUT_MS,
      )
      assert.match(output, /^verdict: PASS/m, output)
      assert.equal(code, 0, output)
      // The run did what it is for: jobs ran, workers were killed and frozen, stale leases were refused.
      const count = (label: string): number => tableCount(output, label)
      assert.ok(count('completed') > 100, output)
      assert.ok(count('worker kills') > 0, output)
      assert.ok(count('freezes \\(SIGSTOP past the lease\\)') > 0, output)
    },
  )
}
