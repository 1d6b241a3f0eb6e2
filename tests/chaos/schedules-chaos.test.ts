/**
 * CI's schedules chaos run: `npm run chaos -- --schedules` on each store of CHAOS_STORES
 * (run-chaos.ts) for 25 s of kills with a fixed seed, and the checker's verdict.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { CHAOS_STORES, runChaosMain, tableCount } from './run-chaos.js'

const SEED = '20261203'
const DURATION = '25s'
/** The kills, the settle (about 6 s) and start-up, with room to spare. */
const TIMEOUT_MS = 120_000

for (const { store, skip } of CHAOS_STORES) {
  test(
    `${DURATION} of scheduler kills on ${store} (seed ${SEED}) fire every slot as its missed policy says`,
    { skip, timeout: TIMEOUT_MS + 10_000 },
    async () => {
      const { code, output } = await runChaosMain(
        ['--schedules', '--store', store, '--duration', DURATION, '--seed', SEED],
        TIMEOUT_MS,
      )
      assert.match(output, /^verdict: PASS/m, output)
      assert.equal(code, 0, output)
      // The run did what it is for: schedulers were killed, all of them at once at least once, so
      // that slots passed with none (skip passed them over, all caught them up late).
      assert.ok(tableCount(output, 'kills \\(SIGKILL within 100 ms of a slot boundary\\)') > 0, output)
      assert.ok(tableCount(output, 'outages \\(every scheduler killed at once\\)') > 0, output)
      const row = (id: string): Record<string, number> => {
        const header = /^\| schedule .*$/m.exec(output)![0].split('|').slice(2, -1)
        const cells = new RegExp(`^\\| ${id} .*$`, 'm').exec(output)![0].split('|').slice(2, -1)
        return Object.fromEntries(header.map((name, i) => [name.trim(), Number(cells[i])]))
      }
      assert.ok(row('every-second-skip')['not fired']! > 0, output)
      assert.ok(row('every-second-all')['late']! > 0, output)
      assert.ok(row('every-2s-once')['jobs']! > 5, output)
    },
  )
}
