/**
 * `npm run chaos -- [--schedules] --store sqlite|postgres|redis [--duration 60s] [--seed N] [--dir path] [--keep]`
 *
 * Sets up a fresh store, runs the chaos supervisor (chaos/supervisor.ts; with --schedules the
 * schedules run, chaos/schedules/supervisor.ts), checks the run (chaos/checker.ts,
 * chaos/schedules/checker.ts), prints the tables and the verdict, and exits 1 on any violation.
 * The histories are kept (and their directory printed) when the run fails, or with --keep.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'

import { parseDuration } from '../src/index.js'
import { checkChaosRun, formatReport } from './checker.js'
import { checkScheduleRun, formatScheduleReport, readScheduleRun } from './schedules/checker.js'
import { runScheduleChaos } from './schedules/supervisor.js'
import { setUpStore, STORE_KINDS, type StoreKind } from './stores.js'
import { runChaos } from './supervisor.js'

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    duration: { type: 'string', default: '60s' },
    seed: { type: 'string' },
    dir: { type: 'string' },
    keep: { type: 'boolean', default: false },
    schedules: { type: 'boolean', default: false },
  },
})
const kind = STORE_KINDS.find((known) => known === values.store)
if (kind === undefined) {
  process.stderr.write(`chaos: --store must be one of ${STORE_KINDS.join(', ')} (got ${values.store})\n`)
  process.exit(2)
}
const durationMs = parseDuration(values.duration, '--duration')
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed)
if (!Number.isInteger(seed) || seed < 0) {
  process.stderr.write(`chaos: --seed must be a non-negative integer (got ${values.seed})\n`)
  process.exit(2)
}
let dir: string
const prefix = values.schedules ? 'ferry-chaos-schedules' : 'ferry-chaos'
if (values.dir === undefined) dir = mkdtempSync(join(tmpdir(), `${prefix}-${kind}-`))
else {
  dir = resolve(values.dir)
  mkdirSync(dir, { recursive: true })
}

const log = (line: string): boolean => process.stderr.write(`chaos: ${line}\n`)
const store = await setUpStore(kind as StoreKind, dir)
let passed: boolean
try {
  const options = { storeUrl: store.url, storeKind: kind, dir, durationMs, seed, log }
  if (values.schedules) {
    const meta = await runScheduleChaos(options)
    const result = checkScheduleRun(readScheduleRun(dir))
    process.stdout.write(`${formatScheduleReport(meta, result)}\n`)
    passed = result.violations.length === 0
  } else {
    const meta = await runChaos(options)
    const result = checkChaosRun(dir)
    process.stdout.write(`${formatReport(meta, result)}\n`)
    passed = result.violations.length === 0
  }
} finally {
  await store.teardown()
}
if (passed && !values.keep) rmSync(dir, { recursive: true, force: true })
else log(`histories kept in ${dir} (re-check with: npx tsx chaos/check.ts ${dir})`)
process.exitCode = passed ? 0 : 1
