/** The tables of a peers run: one per scenario, figure and store, with ratios to the floor and the best peer. */
import { formatNumber } from '../../lib/report.js'
import { summarize, type Summary } from '../../lib/stats.js'
import type { FigureSpec, ScenarioDef } from './scenarios.js'
import { isPeer, type ProductName, type StoreKind, type Windowed } from './types.js'

/** Every value one row gathered across the runs. */
export interface RowData {
  product: ProductName
  variantLabel: string
  values: number[]
  /** One for each run whose window ran out before every job was done. */
  windowed: Windowed[]
  errors: string[]
}

function formatValue(value: number, unit: FigureSpec['unit']): string {
  if (value === 0) return unit === 'jobs/s' ? '0/s' : `0 ${unit === '% of a core' ? '%' : unit}`
  switch (unit) {
    case 'jobs/s':
      return `${formatNumber(value)}/s`
    case 'ms':
      return `${formatNumber(value)} ms`
    case '% of a core':
      return `${formatNumber(value)} %`
    case 'MiB':
      return `${formatNumber(value)} MiB`
  }
}

function rowName(row: RowData): string {
  return row.variantLabel === '' ? row.product : `${row.product}, ${row.variantLabel}`
}

function ratio(value: number, reference: number | undefined): string {
  if (reference === undefined || reference === 0) return '—'
  // A 0 beside a positive reference (an idle process that used no clock tick) is 0×, not 0.00000×.
  return value === 0 ? '0×' : `${formatNumber(value / reference)}×`
}

/** The table of one figure on one store, and a line naming the reference rows. */
export function renderFigureTable(
  def: ScenarioDef,
  figure: FigureSpec,
  store: StoreKind,
  rows: readonly RowData[],
): string {
  const measured = rows.filter((row) => row.values.length > 0)
  const summaries = new Map<RowData, Summary>(measured.map((row) => [row, summarize(row.values)]))
  const better = (a: number, b: number): boolean => (figure.better === 'higher' ? a > b : a < b)
  const floor = measured.find((row) => row.product === 'floor')
  let best: RowData | undefined
  for (const row of measured) {
    if (!isPeer(row.product)) continue
    if (best === undefined || better(summaries.get(row)!.median, summaries.get(best)!.median)) best = row
  }
  const floorMedian = floor === undefined ? undefined : summaries.get(floor)!.median
  const bestMedian = best === undefined ? undefined : summaries.get(best)!.median
  const lines = [
    `#### ${def.name}, ${store}: ${figure.label} (${figure.better} is better)`,
    '',
    '| product | median | min – max | × floor | × best peer | note |',
    '| --- | ---: | ---: | ---: | ---: | --- |',
  ]
  const runsAsked = Math.max(...rows.map((row) => row.values.length + row.errors.length))
  for (const row of rows) {
    const summary = summaries.get(row)
    const notes = [...windowNotes(row.windowed), ...new Set(row.errors.map((error) => `failed: ${error}`))]
    // A row some of whose runs failed says on how many runs its median stands.
    if (summary !== undefined && row.values.length < runsAsked)
      notes.push(`median of ${row.values.length} run${row.values.length === 1 ? '' : 's'}`)
    const note = notes.join('; ')
    if (summary === undefined) {
      lines.push(`| ${rowName(row)} | — | — | — | — | ${note} |`)
      continue
    }
    const median = formatValue(summary.median, figure.unit)
    const range = `${formatValue(summary.min, figure.unit)} – ${formatValue(summary.max, figure.unit)}`
    const toFloor = row === floor ? '—' : ratio(summary.median, floorMedian)
    lines.push(
      `| ${rowName(row)} | ${median} | ${range} | ${toFloor} | ${ratio(summary.median, bestMedian)} | ${note} |`,
    )
  }
  lines.push('')
  lines.push(
    `Floor: ${floor === undefined ? 'not measured' : rowName(floor)}; best peer: ${best === undefined ? 'none measured' : rowName(best)}.`,
  )
  return lines.join('\n')
}

/** "3–5 of 2,000 done within 10 s" for the runs whose window ran out. */
function windowNotes(windowed: readonly Windowed[]): string[] {
  if (windowed.length === 0) return []
  const done = windowed.map((w) => w.done)
  const [least, most] = [Math.min(...done), Math.max(...done)]
  const count = least === most ? `${least}` : `${least}–${most}`
  const { size, windowSeconds } = windowed[0]!
  const runs = windowed.length === 1 ? 'a run' : `${windowed.length} runs`
  return [
    `${runs} stopped at the ${windowSeconds} s window: ${count} of ${size.toLocaleString('en-US')} done`,
  ]
}
