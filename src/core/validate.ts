/**
 * Input validation for everything a producer hands Ferry. It runs before any store is touched, so
 * a bad job never reaches the store and a bad job in a batch stops the whole batch.
 */
import { ValidationError } from './errors.js'
import {
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_PAYLOAD_BYTES,
  DEFAULT_PRIORITY,
  DEFAULT_QUEUE,
  type NewJob,
} from './job.js'

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
  /** Idempotency key: while a job with this key exists, enqueueing it again returns that job. */
  uniqueKey?: string
}

const OPTION_KEYS = new Set<string>([
  'queue',
  'priority',
  'delayMs',
  'runAt',
  'maxAttempts',
  'timeoutMs',
  'uniqueKey',
])

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
  const at = (key: string): string => (field === '' ? key : `${field}.${key}`)
  assertName(name, at('name'), 'invalid_name')
  const opts = options ?? {}
  if (typeof opts !== 'object' || Array.isArray(opts)) {
    throw new ValidationError('invalid_option', at('options'), 'must be an object')
  }
  for (const key of Object.keys(opts)) {
    if (!OPTION_KEYS.has(key)) {
      throw new ValidationError(
        'invalid_option',
        at(key),
        `unknown option (known options: ${[...OPTION_KEYS].join(', ')})`,
      )
    }
  }
  const queue = opts.queue ?? DEFAULT_QUEUE
  assertName(queue, at('queue'), 'invalid_queue')
  const priority = opts.priority ?? DEFAULT_PRIORITY
  assertIntegerIn(priority, PRIORITY_MIN, PRIORITY_MAX, at('priority'), 'invalid_priority')
  const maxAttempts = opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS
  assertIntegerIn(maxAttempts, 1, MAX_ATTEMPTS_LIMIT, at('maxAttempts'), 'invalid_max_attempts')
  const timeoutMs = opts.timeoutMs ?? null
  if (timeoutMs !== null) {
    assertIntegerIn(timeoutMs, 1, MAX_TIMEOUT_MS, at('timeoutMs'), 'invalid_timeout')
  }
  const uniqueKey = opts.uniqueKey ?? null
  if (uniqueKey !== null) assertUniqueKey(uniqueKey, at('uniqueKey'))

  let runAt: number | null = null
  let delayMs = 0
  // As for every option, null means "not given".
  if (opts.delayMs != null && opts.runAt != null) {
    throw new ValidationError('invalid_option', at('runAt'), 'give delayMs or runAt, not both')
  }
  if (opts.delayMs != null) {
    delayMs = opts.delayMs
    if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0 || delayMs > MAX_DELAY_MS) {
      throw new ValidationError(
        'invalid_delay',
        at('delayMs'),
        `must be a number of milliseconds from 0 to ${MAX_DELAY_MS} (got ${describe(delayMs)})`,
      )
    }
    delayMs = Math.ceil(delayMs)
  }
  if (opts.runAt != null) runAt = toInstant(opts.runAt, at('runAt'))

  return {
    queue: queue as string,
    name: name as string,
    payload: serializePayload(payload, at('payload'), maxPayloadBytes),
    priority,
    runAt,
    delayMs,
    maxAttempts,
    timeoutMs,
    uniqueKey,
  }
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
      `must be 1 to 128 characters of letters, digits, '.', '_', ':' or '-' (got ${describe(value)})`,
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

function assertUniqueKey(value: unknown, field: string): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > UNIQUE_KEY_MAX_LENGTH) {
    throw new ValidationError(
      'invalid_unique_key',
      field,
      `must be a string of 1 to ${UNIQUE_KEY_MAX_LENGTH} characters (got ${describe(value)})`,
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

function assertIntegerIn(
  value: unknown,
  min: number,
  max: number,
  field: string,
  code: 'invalid_priority' | 'invalid_max_attempts' | 'invalid_timeout',
): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ValidationError(
      code,
      field,
      `must be an integer from ${min} to ${max} (got ${describe(value)})`,
    )
  }
}

function toInstant(value: unknown, field: string): number {
  const ms = value instanceof Date ? value.getTime() : value
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > MAX_TIMESTAMP) {
    throw new ValidationError(
      'invalid_run_at',
      field,
      `must be a valid Date or epoch milliseconds (got ${describe(value)})`,
    )
  }
  return Math.ceil(ms)
}

/**
 * Serialises a payload to JSON text, refusing anything JSON would silently change: NaN and
 * Infinity (become null), undefined in arrays (becomes null), functions, symbols, BigInt, cycles,
 * and objects such as Map, Set or Error that serialise to `{}`. Objects with toJSON (Date) are
 * taken as they serialise. An undefined object property is dropped, as in JSON.
 */
export function serializePayload(
  payload: unknown,
  field = 'payload',
  maxBytes = DEFAULT_MAX_PAYLOAD_BYTES,
): string {
  if (payload === undefined) {
    throw new ValidationError('invalid_payload', field, 'is undefined; send null or a JSON value')
  }
  assertJsonValue(payload, field, [])
  const json = JSON.stringify(payload)
  // UTF-8 is at most 3 bytes per UTF-16 unit: skip the byte count when it cannot exceed the limit.
  if (json.length * 3 > maxBytes) {
    const bytes = Buffer.byteLength(json, 'utf8')
    if (bytes > maxBytes) {
      throw new ValidationError(
        'payload_too_large',
        field,
        `is ${bytes} bytes of JSON, over the limit of ${maxBytes} bytes`,
      )
    }
  }
  return json
}

function assertJsonValue(value: unknown, field: string, ancestors: object[]): void {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return
    case 'number':
      if (!Number.isFinite(value)) {
        throw new ValidationError('invalid_payload', field, `${String(value)} is not a JSON value`)
      }
      return
    case 'object':
      break
    default:
      throw new ValidationError('invalid_payload', field, `a ${typeof value} is not a JSON value`)
  }
  if (value === null) return
  if (ancestors.includes(value)) {
    throw new ValidationError('invalid_payload', field, 'refers back to itself (a cycle cannot be JSON)')
  }
  ancestors.push(value)
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i]
      const itemField = `${field}[${i}]`
      if (item === undefined) {
        throw new ValidationError('invalid_payload', itemField, 'undefined in an array would become null')
      }
      assertJsonValue(item, itemField, ancestors)
    }
  } else {
    const toJSON = (value as { toJSON?: unknown }).toJSON
    if (typeof toJSON === 'function') {
      const replaced: unknown = toJSON.call(value)
      if (replaced !== value) assertJsonValue(replaced, field, ancestors)
    } else {
      const proto: unknown = Object.getPrototypeOf(value)
      if (proto !== Object.prototype && proto !== null) {
        const kind = (value as { constructor?: { name?: string } }).constructor?.name ?? 'object'
        throw new ValidationError(
          'invalid_payload',
          field,
          `a ${kind} is not a plain JSON object; convert it to a plain object or array first`,
        )
      }
      for (const key of Object.keys(value)) {
        const prop: unknown = (value as Record<string, unknown>)[key]
        if (prop !== undefined) assertJsonValue(prop, `${field}.${key}`, ancestors)
      }
    }
  }
  ancestors.pop()
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value)
  if (value === null) return 'null'
  if (value === undefined) return 'undefined'
  if (Array.isArray(value)) return 'an array'
  return `a ${typeof value}`
}
