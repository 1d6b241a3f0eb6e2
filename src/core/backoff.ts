/**
 * Retry delays: exponential growth with "equal jitter" (half fixed, half random), so retries of
 * jobs that failed together spread out instead of returning as a herd, and no retry comes sooner
 * than half its nominal delay.
 */
import { ValidationError } from './errors.js'
import type { JobBackoff } from './job.js'
import { assertKnownKeys, optionKeys } from './option-keys.js'

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

/** The most delays a job's backoff list may hold: one per retry, far more than any job retries differently. */
export const BACKOFF_LIST_MAX = 100
/** The longest single delay a job's backoff may ask for: a year. */
const BACKOFF_DELAY_MAX_MS = 365 * 24 * 3600 * 1000

/**
 * What a producer may give as a job's `backoff`: a JobBackoff, exponential with its fields
 * optional (the worker's defaults fill them). Checked and completed here, so the stored form is
 * whole and a worker of another version reads what was meant.
 */
export type JobBackoffOption =
  | { type: 'fixed'; delayMs: number }
  | ({ type: 'exponential' } & BackoffOptions)
  | { type: 'list'; delaysMs: readonly number[] }

const BACKOFF_TYPES = ['fixed', 'exponential', 'list'] as const
const FIXED_KEYS = ['type', 'delayMs'] as const
const EXPONENTIAL_KEYS = ['type', 'baseMs', 'factor', 'maxMs'] as const
const LIST_KEYS = ['type', 'delaysMs'] as const

/** A job's backoff option, checked (ValidationError naming `field.key`) and completed. */
export function normalizeJobBackoff(value: unknown, field = 'backoff'): JobBackoff {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError(
      'invalid_option',
      field,
      `must be an object with a type: ${BACKOFF_TYPES.join(', ')}`,
    )
  }
  const type = (value as { type?: unknown }).type
  const delay = (delayMs: unknown, at: string): number => {
    if (
      typeof delayMs !== 'number' ||
      !Number.isInteger(delayMs) ||
      delayMs < 0 ||
      delayMs > BACKOFF_DELAY_MAX_MS
    ) {
      throw new ValidationError(
        'invalid_option',
        at,
        `must be a whole number of milliseconds from 0 to ${BACKOFF_DELAY_MAX_MS} (got ${String(delayMs)})`,
      )
    }
    return delayMs
  }
  switch (type) {
    case 'fixed': {
      assertKnownKeys(value, FIXED_KEYS, field)
      return { type, delayMs: delay((value as { delayMs?: unknown }).delayMs, `${field}.delayMs`) }
    }
    case 'exponential': {
      assertKnownKeys(value, EXPONENTIAL_KEYS, field)
      const { type: _type, ...options } = value as { type: 'exponential' } & BackoffOptions
      assertBackoffOptions(options, field)
      return { type, ...DEFAULT_BACKOFF, ...definedOnly(options) }
    }
    case 'list': {
      assertKnownKeys(value, LIST_KEYS, field)
      const delays = (value as { delaysMs?: unknown }).delaysMs
      if (!Array.isArray(delays) || delays.length === 0 || delays.length > BACKOFF_LIST_MAX) {
        throw new ValidationError(
          'invalid_option',
          `${field}.delaysMs`,
          `must be a list of 1 to ${BACKOFF_LIST_MAX} delays in milliseconds`,
        )
      }
      return { type, delaysMs: delays.map((ms, i) => delay(ms, `${field}.delaysMs[${i}]`)) }
    }
    default:
      throw new ValidationError(
        'invalid_option',
        `${field}.type`,
        `must be one of ${BACKOFF_TYPES.join(', ')} (got ${String(type)})`,
      )
  }
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>
}

/**
 * The delay after failed attempt number `attempt` of a job: by the job's own backoff when it has
 * one (fixed and listed delays exactly as given, exponential with the worker's jitter), else by the
 * worker's options.
 */
export function retryDelayMs(
  attempt: number,
  jobBackoff: JobBackoff | null,
  workerBackoff: BackoffOptions | undefined,
  random: () => number = Math.random,
): number {
  if (jobBackoff === null) return backoffMs(attempt, workerBackoff, random)
  switch (jobBackoff.type) {
    case 'fixed':
      return jobBackoff.delayMs
    case 'list':
      return jobBackoff.delaysMs[Math.min(attempt, jobBackoff.delaysMs.length) - 1]!
    case 'exponential': {
      const { baseMs, factor, maxMs } = jobBackoff
      return backoffMs(attempt, { baseMs, factor, maxMs }, random)
    }
  }
}
