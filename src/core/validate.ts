/**
 * Input validation for everything a producer hands Ferry. It runs before any store is touched, so
 * a bad job never reaches the store and a bad job in a batch stops the whole batch.
 */
import { normalizeJobBackoff, type JobBackoffOption } from './backoff.js'
import { ValidationError } from './errors.js'
import {
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_PAYLOAD_BYTES,
  DEFAULT_PRIORITY,
  DEFAULT_QUEUE,
  UNIQUE_UNTIL,
  type NewJob,
  type UniqueUntil,
} from './job.js'
import { assertKnownKeys, describeValue, optionKeys } from './option-keys.js'
import { serializePayload } from './payload.js'

/** Queue and job names: safe in file names, URLs, Redis keys and log lines. */
export const NAME_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/

export const PRIORITY_MIN = -2_147_483_648
export const PRIORITY_MAX = 2_147_483_647
export const MAX_ATTEMPTS_LIMIT = 1_000_000
/** Longer than any sane delay, short enough that runAt stays a valid Date. */
export const MAX_DELAY_MS = 100 * 365 * 24 * 3600 * 1000
/** The longest timer Node can set (setTimeout overflows past 2^31 - 1 ms). */
export const MAX_TIMEOUT_MS = 2_147_483_647
export const UNIQUE_KEY_MAX_LENGTH = 255
export const GROUP_MAX_LENGTH = 255
const MAX_TIMESTAMP = 8.64e15

/**
 * What a producer may say about one job. Unknown keys are rejected: a typo must not be dropped.
 * An option given as null or undefined takes its default.
 */
export interface EnqueueOptions {
  queue?: string
  /** Integer; higher runs first. Default 0. */
  priority?: number
  /** Run no earlier than this many milliseconds from now. */
  delayMs?: number
  /** Run no earlier than this instant (a Date or epoch milliseconds). Not with delayMs. */
  runAt?: Date | number
  /** Attempts before the job is dead, the first included. Default 25. */
  maxAttempts?: number
  /** Per-attempt time limit in milliseconds. */
  timeoutMs?: number
  /**
   * Idempotency key: while a job holds this key, enqueueing it again returns that job and writes
   * nothing. How long it holds: uniqueUntil, or uniqueForMs (docs/uniqueness.md).
   */
  uniqueKey?: string
  /**
   * When the key frees: 'purged' (the default: while the job is stored), 'finished' (once it
   * completes or ends dead) or 'started' (once a worker claims it). Needs uniqueKey.
   */
  uniqueUntil?: UniqueUntil
  /**
   * Throttle: the key holds for this many milliseconds from this enqueue, whatever becomes of the
   * job, and is free after it. Needs uniqueKey; not with uniqueUntil or debounceMs.
   */
  uniqueForMs?: number
  /**
   * Debounce: the job runs this many milliseconds from now, and an enqueue of the same key before
   * it starts replaces its payload and moves its run time to this long from then. Needs uniqueKey;
   * the key frees when the job starts (uniqueUntil 'started', the default here) or finishes
   * ('finished'). Not with delayMs, runAt or uniqueForMs.
   */
  debounceMs?: number
  /** The job's group (a tenant, a customer, an API key): what per-group limits count. 1 to 255 characters. */
  group?: string
  /** Start deadline: if the job has not started this many milliseconds from now, it never runs. */
  expiresInMs?: number
  /** Start deadline as an instant (a Date or epoch milliseconds). Not with expiresInMs. */
  expiresAt?: Date | number
  /**
   * This job's delays between attempts, in place of its worker's backoff: `{ type: 'fixed',
   * delayMs }`, `{ type: 'exponential', baseMs?, factor?, maxMs? }` or `{ type: 'list', delaysMs }`
   * (one delay per retry, the last repeated).
   */
  backoff?: JobBackoffOption
  /**
   * How long the job is kept once it completed or went dead, in place of its queue's retention
   * (age and count): whole milliseconds, or Infinity to keep it until purged.
   */
  keepForMs?: number
}

const ENQUEUE_OPTION_KEYS = optionKeys<EnqueueOptions>({
  queue: true,
  priority: true,
  delayMs: true,
  runAt: true,
  maxAttempts: true,
  timeoutMs: true,
  uniqueKey: true,
  uniqueUntil: true,
  uniqueForMs: true,
  debounceMs: true,
  group: true,
  expiresInMs: true,
  expiresAt: true,
  backoff: true,
  keepForMs: true,
})

export interface NormalizeJobOptions {
  maxPayloadBytes?: number
  /** Prefix for field paths in errors, e.g. `jobs[3]`. */
  field?: string
}

/** Validates one job and fills in defaults. Throws ValidationError naming the bad field. */
export function normalizeJob(
  name: unknown,
  payload: unknown,
  options: EnqueueOptions | undefined,
  { maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES, field = '' }: NormalizeJobOptions = {},
): NewJob {
  if (field !== '') {
    try {
      return normalizeJob(name, payload, options, { maxPayloadBytes })
    } catch (error) {
      throw error instanceof ValidationError ? withFieldPrefix(error, field) : error
    }
  }
  assertName(name, 'name', 'invalid_name')
  // Without options every setting is its default, known to be valid: a bulk enqueue of plain jobs
  // runs only what it needs (its first call runs cold, where every check costs).
  if (options == null) {
    return {
      queue: DEFAULT_QUEUE,
      name,
      payload: serializePayload(payload, 'payload', maxPayloadBytes),
      priority: DEFAULT_PRIORITY,
      runAt: null,
      delayMs: 0,
      maxAttempts: DEFAULT_MAX_ATTEMPTS,
      timeoutMs: null,
      uniqueKey: null,
      uniqueUntil: 'purged',
      uniqueForMs: null,
      debounceMs: null,
      group: null,
      expiresAt: null,
      expiresInMs: null,
      schedule: null,
      backoff: null,
      keepForMs: null,
    }
  }
  const opts = options
  if (typeof opts !== 'object' || Array.isArray(opts)) {
    throw new ValidationError('invalid_option', 'options', 'must be an object')
  }
  assertKnownKeys(opts, ENQUEUE_OPTION_KEYS, '')
  const queue = opts.queue ?? DEFAULT_QUEUE
  assertName(queue, 'queue', 'invalid_queue')
  const priority = opts.priority ?? DEFAULT_PRIORITY
  assertInteger(priority, 'priority', { min: PRIORITY_MIN, max: PRIORITY_MAX }, 'invalid_priority')
  const maxAttempts = opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS
  assertInteger(maxAttempts, 'maxAttempts', { min: 1, max: MAX_ATTEMPTS_LIMIT }, 'invalid_max_attempts')
  const timeoutMs = opts.timeoutMs ?? null
  if (timeoutMs !== null) {
    assertInteger(timeoutMs, 'timeoutMs', { min: 1, max: MAX_TIMEOUT_MS }, 'invalid_timeout')
  }
  const uniqueKey = opts.uniqueKey ?? null
  if (uniqueKey !== null) assertUniqueKey(uniqueKey, 'uniqueKey')
  const group = opts.group ?? null
  if (group !== null) assertGroup(group, 'group')

  let runAt: number | null = null
  let delayMs = 0
  // As for every option, null means "not given".
  if (opts.delayMs != null && opts.runAt != null) {
    throw new ValidationError('invalid_option', 'runAt', 'give delayMs or runAt, not both')
  }
  if (opts.delayMs != null) {
    delayMs = opts.delayMs
    if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0 || delayMs > MAX_DELAY_MS) {
      throw new ValidationError(
        'invalid_delay',
        'delayMs',
        `must be a number of milliseconds from 0 to ${MAX_DELAY_MS} (got ${describeValue(delayMs)})`,
      )
    }
    delayMs = Math.ceil(delayMs)
  }
  if (opts.runAt != null) runAt = toInstant(opts.runAt, 'runAt')
  const { uniqueUntil, uniqueForMs, debounceMs } = uniqueness(opts, uniqueKey)
  // A debounced job's first run time is the same as any later enqueue of its key would set.
  if (debounceMs !== null) delayMs = debounceMs
  const { expiresAt, expiresInMs } = startDeadline(opts, runAt, delayMs)
  const keepForMs = opts.keepForMs ?? null
  if (keepForMs !== null) assertKeepMs(keepForMs, 'keepForMs')

  return {
    queue: queue as string,
    name,
    payload: serializePayload(payload, 'payload', maxPayloadBytes),
    priority,
    runAt,
    delayMs,
    maxAttempts,
    timeoutMs,
    uniqueKey,
    uniqueUntil,
    uniqueForMs,
    debounceMs,
    group,
    expiresAt,
    expiresInMs,
    schedule: null,
    backoff: opts.backoff == null ? null : normalizeJobBackoff(opts.backoff),
    keepForMs,
  }
}

/**
 * The longest retention short of forever (Infinity): about 100 years. Past it, keeping forever is
 * the honest setting, and every store's arithmetic on instants stays exact.
 */
export const KEEP_MAX_MS = 100 * 365 * 86_400_000

/** How long finished jobs are kept: whole milliseconds up to KEEP_MAX_MS, or Infinity (forever). */
export function assertKeepMs(value: unknown, field: string): void {
  if (value === Infinity) return
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > KEEP_MAX_MS) {
    throw new ValidationError(
      'invalid_option',
      field,
      `must be whole milliseconds from 0 to ${KEEP_MAX_MS} (about 100 years), or Infinity to keep forever (got ${describeValue(value)})`,
    )
  }
}

/**
 * How long a job's unique key holds. Each mode needs the key, and the modes that cannot hold
 * together are refused: a throttle's window says when the key frees, so it takes no uniqueUntil,
 * and a debounce moves the run time, so it takes no delayMs, runAt or window. A debounced key frees
 * when its job starts or finishes: held until the purge, it would answer every later enqueue with
 * a job that already ran.
 */
function uniqueness(
  opts: EnqueueOptions,
  uniqueKey: string | null,
): Pick<NewJob, 'uniqueUntil' | 'uniqueForMs' | 'debounceMs'> {
  const { uniqueUntil, uniqueForMs, debounceMs } = opts
  if (uniqueUntil == null && uniqueForMs == null && debounceMs == null) {
    return { uniqueUntil: 'purged', uniqueForMs: null, debounceMs: null }
  }
  const given = uniqueUntil != null ? 'uniqueUntil' : uniqueForMs != null ? 'uniqueForMs' : 'debounceMs'
  if (uniqueKey === null) {
    throw new ValidationError('invalid_option', given, 'needs a uniqueKey: it says how long the key holds')
  }
  if (uniqueUntil != null && !UNIQUE_UNTIL.includes(uniqueUntil)) {
    throw new ValidationError(
      'invalid_option',
      'uniqueUntil',
      `must be one of ${UNIQUE_UNTIL.map((mode) => `'${mode}'`).join(', ')} (got ${describeValue(uniqueUntil)})`,
    )
  }
  if (uniqueForMs != null) {
    if (uniqueUntil != null) {
      throw new ValidationError(
        'invalid_option',
        'uniqueForMs',
        'give uniqueForMs or uniqueUntil, not both: the window says when the key frees',
      )
    }
    if (debounceMs != null) {
      throw new ValidationError(
        'invalid_option',
        'uniqueForMs',
        'give uniqueForMs or debounceMs, not both: a throttle keeps the first job, a debounce the last payload',
      )
    }
    return { uniqueUntil: 'purged', uniqueForMs: positiveMs(uniqueForMs, 'uniqueForMs'), debounceMs: null }
  }
  if (debounceMs != null) {
    if (uniqueUntil === 'purged') {
      throw new ValidationError(
        'invalid_option',
        'uniqueUntil',
        "must be 'started' or 'finished' with debounceMs: a key held until the purge would answer every later enqueue with a job that already ran",
      )
    }
    if (opts.delayMs != null || opts.runAt != null) {
      throw new ValidationError(
        'invalid_option',
        'debounceMs',
        `give debounceMs or ${opts.delayMs != null ? 'delayMs' : 'runAt'}, not both: debounceMs sets the run time`,
      )
    }
    return {
      uniqueUntil: uniqueUntil ?? 'started',
      uniqueForMs: null,
      debounceMs: positiveMs(debounceMs, 'debounceMs'),
    }
  }
  return { uniqueUntil: uniqueUntil!, uniqueForMs: null, debounceMs: null }
}

/** A duration above 0, at most MAX_DELAY_MS, rounded up to whole milliseconds. */
function positiveMs(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_DELAY_MS) {
    throw new ValidationError(
      'invalid_option',
      field,
      `must be a number of milliseconds above 0, at most ${MAX_DELAY_MS} (got ${describeValue(value)})`,
    )
  }
  return Math.ceil(value)
}

/**
 * The start deadline of a job: expiresAt (an instant) or expiresInMs (from the store's clock at
 * enqueue). A deadline that cannot come after the job's run time is refused, where the two are
 * given alike (both instants, or both from now): the job could never run.
 */
function startDeadline(
  opts: EnqueueOptions,
  runAt: number | null,
  delayMs: number,
): { expiresAt: number | null; expiresInMs: number | null } {
  if (opts.expiresAt != null && opts.expiresInMs != null) {
    throw new ValidationError('invalid_option', 'expiresAt', 'give expiresInMs or expiresAt, not both')
  }
  if (opts.expiresInMs != null) {
    const ms = opts.expiresInMs
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0 || ms > MAX_DELAY_MS) {
      throw new ValidationError(
        'invalid_option',
        'expiresInMs',
        `must be a number of milliseconds above 0, at most ${MAX_DELAY_MS} (got ${describeValue(ms)})`,
      )
    }
    const expiresInMs = Math.ceil(ms)
    if (runAt === null && expiresInMs <= delayMs) {
      throw new ValidationError(
        'invalid_option',
        'expiresInMs',
        `must be longer than delayMs (${delayMs}): the job would expire before it may run`,
      )
    }
    return { expiresAt: null, expiresInMs }
  }
  if (opts.expiresAt != null) {
    const expiresAt = toInstant(opts.expiresAt, 'expiresAt')
    if (runAt !== null && expiresAt <= runAt) {
      throw new ValidationError(
        'invalid_option',
        'expiresAt',
        'must be after runAt: the job would expire before it may run',
      )
    }
    return { expiresAt, expiresInMs: null }
  }
  return { expiresAt: null, expiresInMs: null }
}

/**
 * The same refusal, for a value found at `prefix` (`jobs[3]`): its field `payload.a` becomes
 * `jobs[3].payload.a`. Callers that check many values in a loop name the value only when one is
 * bad, instead of building every value's field paths in case one is.
 */
export function withFieldPrefix(error: ValidationError, prefix: string): ValidationError {
  const reason = error.message.slice(error.field.length + 2)
  const prefixed = new ValidationError(error.code, `${prefix}.${error.field}`, reason)
  if (error.cause !== undefined) prefixed.cause = error.cause
  return prefixed
}

export function assertName(
  value: unknown,
  field: string,
  code: 'invalid_queue' | 'invalid_name' = 'invalid_queue',
): asserts value is string {
  if (typeof value !== 'string' || !NAME_PATTERN.test(value)) {
    throw new ValidationError(
      code,
      field,
      `must be 1 to 128 characters of letters, digits, '.', '_', ':' or '-' (got ${describeValue(value)})`,
    )
  }
}

/** A list of queue names for a worker or a claim: non-empty, valid, no repeats (order matters). */
export function assertQueueList(value: unknown, field = 'queues'): asserts value is string[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new ValidationError('invalid_queue', field, 'must be a non-empty list of queue names')
  }
  const seen = new Set<string>()
  value.forEach((queue, i) => {
    assertName(queue, `${field}[${i}]`)
    if (seen.has(queue)) {
      throw new ValidationError('invalid_queue', `${field}[${i}]`, `"${queue}" is listed twice`)
    }
    seen.add(queue)
  })
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

function assertGroup(value: unknown, field: string): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > GROUP_MAX_LENGTH) {
    throw new ValidationError(
      'invalid_option',
      field,
      `must be a string of 1 to ${GROUP_MAX_LENGTH} characters (got ${describeValue(value)})`,
    )
  }
}

export function assertUniqueKey(value: unknown, field: string): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > UNIQUE_KEY_MAX_LENGTH) {
    throw new ValidationError(
      'invalid_unique_key',
      field,
      `must be a string of 1 to ${UNIQUE_KEY_MAX_LENGTH} characters (got ${describeValue(value)})`,
    )
  }
  // A key must mean the same in every store: PostgreSQL text cannot hold U+0000, and a lone
  // surrogate has no UTF-8 form (the driver would send U+FFFD, so two different keys would meet).
  if (value.includes('\u0000') || LONE_SURROGATE.test(value)) {
    throw new ValidationError(
      'invalid_unique_key',
      field,
      'must not contain U+0000 or a lone surrogate (it could not be stored as written)',
    )
  }
}

/** The bounds of an integer option, each inclusive; a missing one leaves that side open. */
export interface IntegerRange {
  min?: number
  max?: number
  /** A word the option also takes instead of a number, for the message: "must be 'auto' or …". */
  orWord?: string
}

type IntegerCode = 'invalid_option' | 'invalid_priority' | 'invalid_max_attempts' | 'invalid_timeout'

/**
 * Refuses anything but a safe integer within `range`. Every integer option Ferry takes, from a
 * job's priority to a pool's size and a page's limit, is checked here, so they all say it the
 * same way: `concurrency: must be a positive integer (got 0)`.
 */
export function assertInteger(
  value: unknown,
  field: string,
  range: IntegerRange = {},
  code: IntegerCode = 'invalid_option',
): asserts value is number {
  if (!isIntegerIn(value, range)) {
    throw new ValidationError(code, field, `must be ${integerKind(range)} (got ${describeValue(value)})`)
  }
}

/**
 * An integer a person typed (a command-line flag): decimal digits with an optional minus sign,
 * within `range`. The message quotes the text as typed: `--limit: "ten" is not a positive integer`.
 */
export function parseInteger(text: string, field: string, range: IntegerRange = {}): number {
  const digits = text.trim()
  const value = /^-?\d+$/.test(digits) ? Number(digits) : NaN
  if (!isIntegerIn(value, range)) {
    throw new ValidationError('invalid_option', field, `${JSON.stringify(text)} is not ${integerKind(range)}`)
  }
  return value
}

function isIntegerIn(value: unknown, { min = -Infinity, max = Infinity }: IntegerRange): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max
}

/** 'a positive integer', 'an integer from 0 to 10000': what `range` allows, in words. */
function integerKind({ orWord, ...range }: IntegerRange): string {
  return orWord === undefined ? integerKindOf(range) : `'${orWord}' or ${integerKindOf(range)}`
}

function integerKindOf({ min = -Infinity, max = Infinity }: IntegerRange): string {
  if (max === Infinity) {
    if (min === 1) return 'a positive integer'
    if (min === 0) return 'a non-negative integer'
    return min === -Infinity ? 'an integer' : `an integer of at least ${min}`
  }
  return min === -Infinity ? `an integer of at most ${max}` : `an integer from ${min} to ${max}`
}

/** An instant a producer gives (a Date or epoch milliseconds), checked, as whole milliseconds. */
export function toInstant(value: unknown, field: string): number {
  const ms = value instanceof Date ? value.getTime() : value
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > MAX_TIMESTAMP) {
    throw new ValidationError(
      'invalid_run_at',
      field,
      `must be a valid Date or epoch milliseconds (got ${describeValue(value)})`,
    )
  }
  return Math.ceil(ms)
}
