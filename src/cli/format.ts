// Output helpers shared by the subcommands: aligned tables, durations and instants for people,
// ISO 8601 for --json, colour on terminals. Human output may change between versions; --json
// output may not.

export type Align = 'left' | 'right'

/**
 * Columns padded to their widest cell, two spaces apart; `align` per column, default left.
 * `paintRow` may colour a row's finished line (colour codes would throw off the padding).
 */
export function formatTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  align: readonly Align[] = [],
  paintRow: (line: string, rowIndex: number) => string = (line) => line,
): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  )
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) =>
        align[column] === 'right' ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!),
      )
      .join('  ')
      .trimEnd()
  return [line(header), ...rows.map((row, index) => paintRow(line(row), index))].join('\n') + '\n'
}

const DURATION_UNITS: readonly [string, number][] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
]

/** '350ms', '5s', '2m 5s', '3h 4m', '2d 3h': the two largest units, rounded down. */
export function formatDuration(ms: number): string {
  let rest = Math.abs(Math.round(ms))
  if (rest < 1000) return `${rest}ms`
  const parts: string[] = []
  for (const [unit, size] of DURATION_UNITS) {
    if (parts.length === 0 && rest < size) continue
    const count = Math.floor(rest / size)
    rest -= count * size
    parts.push(count > 0 ? `${count}${unit}` : '')
    if (parts.length === 2) break
  }
  return parts.filter((part) => part !== '').join(' ')
}

/**
 * Local time, to the second, with how far from `now` it is: '2026-11-30 11:38:00 (in 5m)'. Every
 * instant in human output takes this form (tables, worker lines, messages); --json has toIso.
 */
export function formatInstant(ms: number, now: number): string {
  const date = new Date(ms)
  const pad = (n: number): string => String(n).padStart(2, '0')
  const day = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  const distance =
    Math.abs(ms - now) < 1000
      ? 'now'
      : ms > now
        ? `in ${formatDuration(ms - now)}`
        : `${formatDuration(now - ms)} ago`
  return `${day} ${time} (${distance})`
}

/** An epoch-ms instant as ISO 8601 text for --json output; null stays null. */
export function toIso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString()
}

/** The first line of `text`, cut to `max` characters; an ellipsis marks anything left out. */
export function truncate(text: string, max: number): string {
  const firstLine = text.split('\n', 1)[0] ?? ''
  if (firstLine === text && text.length <= max) return text
  return `${firstLine.slice(0, max - 1)}…`
}

/** '1 job', '3 jobs'. */
export function countOf(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`
}

/** Pretty JSON with a trailing newline, the form every --json output takes. */
export function formatJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`
}

export type Color = 'red' | 'yellow' | 'dim'

const COLOR_CODES: Readonly<Record<Color, readonly [open: number, close: number]>> = {
  red: [31, 39],
  yellow: [33, 39],
  dim: [2, 22],
}

/**
 * Colours for what goes to `stream`, or none: on a terminal that shows colours (Node's
 * hasColors, which honours NO_COLOR, FORCE_COLOR and TERM=dumb); elsewhere (a pipe, a file) only
 * when FORCE_COLOR asks for them, with Node's meaning of its values.
 */
export function painter(stream: NodeJS.WriteStream): (text: string, color: Color) => string {
  const force = process.env.FORCE_COLOR
  const on =
    stream.isTTY === true ? stream.hasColors() : force !== undefined && force !== '0' && force !== 'false'
  if (!on) return (text) => text
  return (text, color) => {
    const [open, close] = COLOR_CODES[color]
    return `\x1b[${open}m${text}\x1b[${close}m`
  }
}
