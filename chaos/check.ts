/**
 * Checks a chaos run again from its kept histories: `npx tsx chaos/check.ts <dir>`.
 */
import { checkChaosRun, formatReport, readMeta } from './checker.js'

const dir = process.argv[2]
if (dir === undefined) {
  process.stderr.write('usage: tsx chaos/check.ts <dir>\n')
  process.exit(2)
}
const result = checkChaosRun(dir)
process.stdout.write(`${formatReport(readMeta(dir), result)}\n`)
process.exitCode = result.violations.length === 0 ? 0 : 1
