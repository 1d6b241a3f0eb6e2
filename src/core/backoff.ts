/**
 * Retry delays: exponential growth with "equal jitter" (half fixed, half random), so retries of
 * jobs that failed together spread out instead of returning as a herd, and no retry comes sooner
 * than half its nominal delay.
 */
import { ValidationError } from './errors.js'
import { assertKnownKeys, optionKeys } from './validate.js'

export interface BackoffOptions {
  /** Nominal delay before the second attempt. Default 1 s. */
  baseMs?: number
  /** Growth per attempt. Default 2. */
  factor?: number
  /** Upper bound of the nominal delay. Default 6 h: 25 attempts then span about three days. */
  maxMs?: number
}

export const DEFAULT_BACKOFF: Required<BackoffOptions> = { baseMs: 1000, factor: 2, maxMs: 6 * 3600 * 1000 }

const BACKOFF_OPTION_KEYS = optionKeys<BackoffOptions>({ baseMs: true, factor: true, maxMs: true })

/**
 * Refuses backoff options that are not what BackoffOptions says: an unknown key (`base` for
 * `baseMs`), or a value that would make a retry time NaN or run backwards. `field` is where the
 * options sit, e.g. `backoff` inside a worker's options. Undefined takes the default.
 */
export function assertBackoffOptions(options: unknown, field = 'backoff'): asserts options is BackoffOptions {
  assertKnownKeys(options, BACKOFF_OPTION_KEYS, field)
  const { baseMs, factor, maxMs } = options as BackoffOptions
  const check = (value: unknown, key: keyof BackoffOptions, min: number, what: string): void => {
    if (value === undefined) return
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
      throw new ValidationError('invalid_option', `${field}.${key}`, `must be ${what} (got ${String(value)})`)
    }
  }
  check(baseMs, 'baseMs', 0, 'a non-negative number of milliseconds')
  check(factor, 'factor', 1, 'a number of at least 1')
  check(maxMs, 'maxMs', 0, 'a non-negative number of milliseconds')
}

/**
 * The delay after failed attempt number `attempt` (1 for the first).
 * `random` returns a number in [0, 1); tests pass a fixed one.
 */
export function backoffMs(
  attempt: number,
  options: BackoffOptions = {},
  random: () => number = Math.random,
): number {
  assertBackoffOptions(options)
  const {
    baseMs = DEFAULT_BACKOFF.baseMs,
    factor = DEFAULT_BACKOFF.factor,
    maxMs = DEFAULT_BACKOFF.maxMs,
  } = options
  const exponent = Math.max(0, attempt - 1)
  const nominal = Math.min(maxMs, baseMs * factor ** exponent)
  const half = nominal / 2
  return Math.round(half + random() * half)
}
