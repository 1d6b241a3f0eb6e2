import type { MachineFacts } from './machine.js'
import type { Summary } from './stats.js'
import type { Target, Unit } from './types.js'

export type Verdict = 'pass' | 'FAIL' | 'not judged (quick)' | ''

export interface Row {
  scenario: string
  label: string
  unit: Unit
  summary: Summary
  target: Target | undefined
  verdict: Verdict
}

export interface ScenarioError {
  scenario: string
  message: string
}

export function judge(value: number, target: Target): boolean {
  switch (target.op) {
    case '<':
      return value < target.value
    case '<=':
      return value <= target.value
    case '>=':
      return value >= target.value
  }
}

/** A number for a table: about three significant digits, thousands separated. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value)
  const abs = Math.abs(value)
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : abs >= 0.1 ? 3 : abs >= 0.01 ? 4 : 5
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

export function formatValue(value: number, unit: Unit): string {
  switch (unit) {
    case '×':
      return `${formatNumber(value)}×`
    case '/s':
      return `${formatNumber(value)}/s`
    default:
      return `${formatNumber(value)} ${unit}`
  }
}

function formatTarget(target: Target | undefined, unit: Unit): string {
  if (target === undefined) return ''
  const op = target.op === '<=' ? '≤' : target.op === '>=' ? '≥' : '<'
  const value = target.value.toLocaleString('en-US')
  return unit === '×' ? `${op} ${value}×` : unit === '/s' ? `${op} ${value}/s` : `${op} ${value} ${unit}`
}

const escapeCell = (text: string): string => text.replaceAll('|', '\\|')

/** The results as a Markdown table (readable in a terminal too). */
export function renderTable(rows: readonly Row[], errors: readonly ScenarioError[]): string {
  const lines = [
    '| scenario | figure | median | min – max | target | result |',
    '| --- | --- | ---: | ---: | --- | --- |',
  ]
  for (const row of rows) {
    const { median, min, max } = row.summary
    const range = `${formatValue(min, row.unit)} – ${formatValue(max, row.unit)}`
    lines.push(
      `| ${[
        row.scenario,
        row.label,
        formatValue(median, row.unit),
        range,
        formatTarget(row.target, row.unit),
        row.verdict,
      ]
        .map(escapeCell)
        .join(' | ')} |`,
    )
  }
  for (const error of errors) {
    lines.push(
      `| ${escapeCell(error.scenario)} | did not finish: ${escapeCell(error.message)} |  |  |  | error |`,
    )
  }
  return lines.join('\n')
}

export interface SectionInput {
  date: Date
  command: string
  runs: number
  machine: MachineFacts
  scenarios: readonly string[]
  /** One description per store the scenarios use (server, versions, durability). */
  stores: readonly string[]
  table: string
  elapsedSeconds: number
}

/** One RESULTS.md section: when, where, with what, and the table. */
export function renderSection(input: SectionInput): string {
  const { machine: m } = input
  return [
    `## ${input.date.toISOString()}`,
    '',
    `- Command: \`${input.command}\` (${input.scenarios.join(', ')}; ${input.runs} run${input.runs === 1 ? '' : 's'} each, ${formatNumber(input.elapsedSeconds)} s in all)`,
    ...input.stores.map((store) => `- Store: ${store}`),
    `- Machine: Node ${m.node}, ${m.cpuCount} CPUs (${m.cpuModel}) shared with other sessions, load average ${m.loadAverage} at start, ${m.memoryGiB} GiB RAM`,
    `- Filesystem of .bench-tmp/: ${m.filesystem}`,
    `- Code: ${m.revision}`,
    `- Each figure: median of ${input.runs} run${input.runs === 1 ? '' : 's'}, each on a fresh database; min – max across runs`,
    '',
    input.table,
    '',
  ].join('\n')
}

/** The Store line of the SQLite scenarios. */
export function describeSqlite(m: MachineFacts): string {
  return `sqlite (better-sqlite3 ${m.betterSqlite3Version}, SQLite ${m.sqliteVersion}), WAL, durability 'full' (synchronous=FULL); claim-latency builds its backlog under 'normal' and times claims under both`
}
