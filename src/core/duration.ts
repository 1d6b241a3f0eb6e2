import { ValidationError } from './errors.js'

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
}
const DURATION_PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)?$/

/** Parses '250ms', '5s', '10m', '2h', '7d', '1w' or a bare number of milliseconds. */
export function parseDuration(text: string, field: string): number {
  const match = DURATION_PATTERN.exec(text.trim())
  if (match === null) {
    throw new ValidationError(
      'invalid_option',
      field,
      `"${text}" is not a duration (use a number with ms, s, m, h, d or w, e.g. 500ms, 5s, 10m)`,
    )
  }
  return Math.round(Number(match[1]) * UNIT_MS[match[2] ?? 'ms']!)
}

const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }
const SIZE_PATTERN = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i

/** Parses '512MB', '64kb', '1GB' or a bare number of bytes. */
export function parseByteSize(text: string, field: string): number {
  const match = SIZE_PATTERN.exec(text.trim())
  if (match === null) {
    throw new ValidationError('invalid_option', field, `"${text}" is not a size (use e.g. 512MB, 64KB, 1GB)`)
  }
  return Math.round(Number(match[1]) * SIZE_UNITS[(match[2] ?? 'b').toLowerCase()]!)
}
