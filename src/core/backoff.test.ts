import assert from 'node:assert/strict'
import { test } from 'node:test'

import {
  assertBackoffOptions,
  backoffMs,
  DEFAULT_BACKOFF,
  normalizeJobBackoff,
  retryDelayMs,
  type BackoffOptions,
} from './backoff.js'
import { ValidationError } from './errors.js'

const lowest = () => 0
/** The largest value Math.random can return. */
const highest = () => 1 - Number.EPSILON

test('the first retry waits between half of baseMs and baseMs', () => {
  assert.equal(backoffMs(1, {}, lowest), 500)
  assert.equal(backoffMs(1, {}, highest), 1000)
  assert.equal(
    backoffMs(1, {}, () => 0.5),
    750,
  )
})

test('the nominal delay doubles with each attempt', () => {
  const delays = [1, 2, 3, 4, 5, 6].map((attempt) => backoffMs(attempt, {}, highest))
  assert.deepEqual(delays, [1000, 2000, 4000, 8000, 16_000, 32_000])
})

test('attempt 0 waits as long as attempt 1', () => {
  assert.equal(backoffMs(0, {}, lowest), backoffMs(1, {}, lowest))
})

test('the nominal delay is capped at maxMs, however many attempts failed', () => {
  assert.equal(DEFAULT_BACKOFF.maxMs, 6 * 3600 * 1000)
  for (const attempt of [16, 25, 100, 5000]) {
    assert.equal(backoffMs(attempt, {}, highest), DEFAULT_BACKOFF.maxMs)
    assert.equal(backoffMs(attempt, {}, lowest), DEFAULT_BACKOFF.maxMs / 2)
  }
})

test('follows the baseMs, factor and maxMs it is given', () => {
  const options = { baseMs: 100, factor: 3, maxMs: 2000 }
  const delays = [1, 2, 3, 4, 5].map((attempt) => backoffMs(attempt, options, highest))
  assert.deepEqual(delays, [100, 300, 900, 2000, 2000])
})

test('jitter keeps every delay within [nominal / 2, nominal]', () => {
  const options = { baseMs: 1000, factor: 2, maxMs: 60_000 }
  for (let attempt = 1; attempt <= 30; attempt++) {
    const nominal = Math.min(options.maxMs, options.baseMs * 2 ** (attempt - 1))
    for (let i = 0; i < 200; i++) {
      const delay = backoffMs(attempt, options)
      assert.ok(
        delay >= nominal / 2 && delay <= nominal,
        `attempt ${attempt}: ${delay} outside [${nominal / 2}, ${nominal}]`,
      )
    }
  }
})

test('jitter spreads retries of jobs that failed together', () => {
  const delays = new Set(Array.from({ length: 100 }, () => backoffMs(10)))
  assert.ok(delays.size > 50, `only ${delays.size} distinct delays out of 100`)
})

test('is deterministic for a fixed random source', () => {
  const fixed = () => 0.3141
  const first = [1, 2, 3, 10, 40].map((attempt) => backoffMs(attempt, {}, fixed))
  const second = [1, 2, 3, 10, 40].map((attempt) => backoffMs(attempt, {}, fixed))
  assert.deepEqual(first, second)
  assert.equal(backoffMs(3, {}, fixed), Math.round(2000 + 0.3141 * 2000))
})

test('returns whole milliseconds', () => {
  for (let i = 0; i < 50; i++) assert.ok(Number.isInteger(backoffMs(1 + (i % 7), { baseMs: 333 })))
})

test('an option given as undefined takes its default', () => {
  assert.equal(backoffMs(2, { baseMs: undefined, factor: undefined, maxMs: undefined }, highest), 2000)
})

test('refuses an unknown option, naming it under backoff and suggesting the one meant', () => {
  assert.throws(
    () => backoffMs(1, { base: 10 } as BackoffOptions),
    (error: unknown) =>
      error instanceof ValidationError &&
      error.code === 'invalid_option' &&
      error.field === 'backoff.base' &&
      error.message ===
        'backoff.base: unknown option, did you mean baseMs? (known options: baseMs, factor, maxMs)',
  )
})

test('refuses values that would make a retry time NaN or come sooner each attempt', () => {
  const bad: [BackoffOptions, string][] = [
    [{ baseMs: -1 }, 'backoff.baseMs'],
    [{ baseMs: Number.NaN }, 'backoff.baseMs'],
    [{ baseMs: '1000' as unknown as number }, 'backoff.baseMs'],
    [{ factor: 0.5 }, 'backoff.factor'],
    [{ maxMs: Infinity }, 'backoff.maxMs'],
  ]
  for (const [options, field] of bad) {
    assert.throws(
      () => assertBackoffOptions(options),
      (error: unknown) => error instanceof ValidationError && error.field === field,
      JSON.stringify(options),
    )
  }
  assertBackoffOptions({ baseMs: 0, factor: 1, maxMs: 0 })
})

test('names the options where they sit', () => {
  assert.throws(
    () => assertBackoffOptions({ factr: 2 }, 'retry.backoff'),
    (error: unknown) => error instanceof ValidationError && error.field === 'retry.backoff.factr',
  )
})

test("a job's backoff option is checked and completed, naming what is wrong", () => {
  assert.deepEqual(normalizeJobBackoff({ type: 'exponential', baseMs: 10 }), {
    type: 'exponential',
    ...DEFAULT_BACKOFF,
    baseMs: 10,
  })
  assert.deepEqual(normalizeJobBackoff({ type: 'list', delaysMs: [1, 2] }), {
    type: 'list',
    delaysMs: [1, 2],
  })
  const refusals: [unknown, string][] = [
    [5000, 'backoff'],
    [{ type: 'linear' }, 'backoff.type'],
    [{ type: 'fixed', delayMs: -1 }, 'backoff.delayMs'],
    [{ type: 'fixed', delayMs: 5, baseMs: 1 }, 'backoff.baseMs'],
    [{ type: 'exponential', factor: 0.5 }, 'backoff.factor'],
    [{ type: 'list', delaysMs: [] }, 'backoff.delaysMs'],
    [{ type: 'list', delaysMs: [1, 'x'] }, 'backoff.delaysMs[1]'],
  ]
  for (const [value, field] of refusals) {
    assert.throws(
      () => normalizeJobBackoff(value),
      (error: unknown) => error instanceof ValidationError && error.field === field,
      field,
    )
  }
})

test('a list backoff gives one delay per retry and repeats its last', () => {
  const list = { type: 'list', delaysMs: [10, 20, 30] } as const
  assert.deepEqual(
    [1, 2, 3, 4, 9].map((attempt) => retryDelayMs(attempt, { ...list, delaysMs: [...list.delaysMs] }, {})),
    [10, 20, 30, 30, 30],
  )
  assert.equal(retryDelayMs(3, { type: 'fixed', delayMs: 250 }, {}), 250)
  assert.equal(retryDelayMs(1, null, { baseMs: 100 }, lowest), 50, "without one, the worker's")
})
