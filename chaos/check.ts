/**
 * Checks a chaos run again from its kept histories: `npx tsx chaos/check.ts <dir>`, for a run of
 * jobs or of schedules (`--schedules`), as its meta.json says.
 */
import { checkChaosRun, formatReport, readMeta } from './checker.js'
import { checkScheduleRun, formatScheduleReport, readScheduleRun } from './schedules/checker.js'

const dir = process.argv[2]
if (dir === undefined) {
  process.stderr.write('usage: tsx chaos/check.ts <dir>\n')
  process.exit(2)
}
const meta = readMeta(dir)
let violations: string[]
if ('run' in meta && meta.run === 'schedules') {
  const run = readScheduleRun(dir)
  const result = checkScheduleRun(run)
  process.stdout.write(`${formatScheduleReport(run.meta, result)}\n`)
  violations = result.violations
} else {
  const result = checkChaosRun(dir)
  process.stdout.write(`${formatReport(meta, result)}\n`)
  violations = result.violations
}
process.exitCode = violations.length === 0 ? 0 : 1
