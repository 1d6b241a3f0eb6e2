import assert from 'node:assert/strict'
import { describe, test } from 'node:test'

import { FerryError } from './errors.js'
import { DEFAULT_MAX_ATTEMPTS } from './job.js'
import {
  assertInteger,
  assertName,
  assertQueueList,
  MAX_ATTEMPTS_LIMIT,
  MAX_DELAY_MS,
  MAX_TIMEOUT_MS,
  normalizeJob,
  parseInteger,
  PRIORITY_MAX,
  PRIORITY_MIN,
  UNIQUE_KEY_MAX_LENGTH,
  type EnqueueOptions,
} from './validate.js'
import { assertKnownKeys, optionKeys } from './option-keys.js'
import { throwsValidation } from '../../tests/support/validation.js'

/** normalizeJob with a valid name and payload and the given options (typed loosely: tests pass bad ones). */
function withOptions(options: Record<string, unknown>) {
  return normalizeJob('send-email', { to: 'a@example.com' }, options as EnqueueOptions)
}

describe('normalizeJob', () => {
  test('fills in the defaults and serialises the payload', () => {
    const job = normalizeJob('send-email', { to: 'a@example.com' }, undefined)
    assert.deepEqual(job, {
      queue: 'default',
      name: 'send-email',
      payload: '{"to":"a@example.com"}',
      priority: 0,
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
    })
  })

  test('keeps every valid option', () => {
    const job = withOptions({
      queue: 'mail:high',
      priority: -7,
      delayMs: 1500,
      maxAttempts: 3,
      timeoutMs: 30_000,
      uniqueKey: 'welcome:42',
      group: 'tenant 42',
      expiresInMs: 60_000.5,
      backoff: { type: 'fixed', delayMs: 5000 },
    })
    assert.deepEqual(job.backoff, { type: 'fixed', delayMs: 5000 })
    assert.equal(job.schedule, null, 'a slot is set by a fire, never by a producer')
    assert.equal(job.group, 'tenant 42')
    assert.equal(job.expiresInMs, 60_001, 'rounded up to whole milliseconds')
    assert.equal(job.expiresAt, null)
    assert.equal(withOptions({ expiresAt: new Date(2e12) }).expiresAt, 2e12)
    assert.equal(job.queue, 'mail:high')
    assert.equal(job.priority, -7)
    assert.equal(job.delayMs, 1500)
    assert.equal(job.runAt, null)
    assert.equal(job.maxAttempts, 3)
    assert.equal(job.timeoutMs, 30_000)
    assert.equal(job.uniqueKey, 'welcome:42')
  })

  test('takes an option given as null as not given, so it gets its default', () => {
    const job = withOptions({
      queue: null,
      priority: null,
      delayMs: null,
      runAt: null,
      maxAttempts: null,
      timeoutMs: null,
      uniqueKey: null,
      uniqueUntil: null,
      uniqueForMs: null,
      debounceMs: null,
      group: null,
      expiresInMs: null,
      expiresAt: null,
    })
    assert.deepEqual([job.group, job.expiresInMs, job.expiresAt], [null, null, null])
    assert.deepEqual([job.uniqueUntil, job.uniqueForMs, job.debounceMs], ['purged', null, null])
    assert.equal(job.queue, 'default')
    assert.equal(job.priority, 0)
    assert.equal(job.delayMs, 0)
    assert.equal(job.runAt, null)
    assert.equal(job.maxAttempts, DEFAULT_MAX_ATTEMPTS)
    assert.equal(job.timeoutMs, null)
    assert.equal(job.uniqueKey, null)
  })

  test('takes runAt as a Date or as epoch milliseconds', () => {
    const at = Date.UTC(2030, 0, 2, 3, 4, 5, 6)
    assert.equal(withOptions({ runAt: new Date(at) }).runAt, at)
    assert.equal(withOptions({ runAt: at }).runAt, at)
    assert.equal(withOptions({ runAt: at }).delayMs, 0)
  })

  test('rounds a fractional delay up to whole milliseconds', () => {
    assert.equal(withOptions({ delayMs: 1.2 }).delayMs, 2)
    assert.equal(withOptions({ delayMs: 0 }).delayMs, 0)
  })

  test('accepts names of 1 to 128 letters, digits and . _ : -', () => {
    for (const name of ['a', 'Z9', 'mail.send_v2:high-prio', 'x'.repeat(128)]) {
      assert.equal(normalizeJob(name, null, { queue: name }).queue, name)
    }
  })

  test('rejects a bad queue name with invalid_queue on field queue', () => {
    for (const queue of ['', 'has space', 'a/b', 'ünicode', 'x'.repeat(129), 42]) {
      throwsValidation(() => withOptions({ queue }), 'invalid_queue', 'queue')
    }
  })

  test('rejects a bad job name with invalid_name on field name', () => {
    for (const name of ['', 'send email', 'x'.repeat(129), 7, undefined]) {
      throwsValidation(() => normalizeJob(name, {}, undefined), 'invalid_name', 'name')
    }
  })

  test('prefixes every field path with the given field, as enqueueMany does', () => {
    const options = { priority: 0.5 } as EnqueueOptions
    throwsValidation(
      () => normalizeJob('n', {}, options, { field: 'jobs[3]' }),
      'invalid_priority',
      'jobs[3].priority',
    )
    throwsValidation(
      () => normalizeJob('n', { a: NaN }, {}, { field: 'jobs[0]' }),
      'invalid_payload',
      'jobs[0].payload.a',
    )
    throwsValidation(
      () => normalizeJob('bad name', {}, {}, { field: 'jobs[1]' }),
      'invalid_name',
      'jobs[1].name',
    )
  })

  test('rejects a priority that is not an int32 integer with invalid_priority', () => {
    for (const priority of [1.5, NaN, Infinity, '1', PRIORITY_MAX + 1, PRIORITY_MIN - 1, 2 ** 40]) {
      throwsValidation(() => withOptions({ priority }), 'invalid_priority', 'priority')
    }
    assert.equal(withOptions({ priority: PRIORITY_MAX }).priority, 2_147_483_647)
    assert.equal(withOptions({ priority: PRIORITY_MIN }).priority, -2_147_483_648)
  })

  test('rejects a negative, non-finite or too long delay with invalid_delay', () => {
    for (const delayMs of [-1, -0.5, NaN, Infinity, MAX_DELAY_MS + 1, '100']) {
      throwsValidation(() => withOptions({ delayMs }), 'invalid_delay', 'delayMs')
    }
    assert.equal(withOptions({ delayMs: MAX_DELAY_MS }).delayMs, MAX_DELAY_MS)
  })

  test('rejects delayMs together with runAt with invalid_option', () => {
    const error = throwsValidation(
      () => withOptions({ delayMs: 10, runAt: Date.now() }),
      'invalid_option',
      'runAt',
    )
    assert.match(error.message, /delayMs or runAt/)
  })

  test('rejects an invalid runAt with invalid_run_at', () => {
    for (const runAt of [new Date('not a date'), -1, NaN, '2030-01-01', 8.64e15 + 1]) {
      throwsValidation(() => withOptions({ runAt }), 'invalid_run_at', 'runAt')
    }
  })

  test('rejects maxAttempts below 1, fractional or too large with invalid_max_attempts', () => {
    for (const maxAttempts of [0, -1, 2.5, MAX_ATTEMPTS_LIMIT + 1, '3']) {
      throwsValidation(() => withOptions({ maxAttempts }), 'invalid_max_attempts', 'maxAttempts')
    }
    assert.equal(withOptions({ maxAttempts: 1 }).maxAttempts, 1)
  })

  test('rejects a timeout below 1 ms or past the longest Node timer with invalid_timeout', () => {
    for (const timeoutMs of [0, -5, 1.5, MAX_TIMEOUT_MS + 1]) {
      throwsValidation(() => withOptions({ timeoutMs }), 'invalid_timeout', 'timeoutMs')
    }
    assert.equal(withOptions({ timeoutMs: MAX_TIMEOUT_MS }).timeoutMs, MAX_TIMEOUT_MS)
  })

  test('rejects an empty or over-long uniqueKey with invalid_unique_key', () => {
    assert.equal(UNIQUE_KEY_MAX_LENGTH, 255)
    for (const uniqueKey of ['', 'k'.repeat(256), 42]) {
      throwsValidation(() => withOptions({ uniqueKey }), 'invalid_unique_key', 'uniqueKey')
    }
    assert.equal(withOptions({ uniqueKey: 'k'.repeat(255) }).uniqueKey, 'k'.repeat(255))
  })

  test('rejects a uniqueKey with U+0000 or a lone surrogate, which no store could keep as written', () => {
    for (const uniqueKey of ['a\u0000b', 'x\ud800', '\udc00y']) {
      throwsValidation(() => withOptions({ uniqueKey }), 'invalid_unique_key', 'uniqueKey')
    }
    assert.equal(withOptions({ uniqueKey: 'émoji 🚢 ok' }).uniqueKey, 'émoji 🚢 ok')
  })

  test('rejects an unknown option key with invalid_option naming it', () => {
    const error = throwsValidation(() => withOptions({ priorty: 5 }), 'invalid_option', 'priorty')
    assert.match(error.message, /^priorty: unknown option/)
    assert.match(error.message, /priority/)
  })

  test('rejects options that are not an object with invalid_option', () => {
    for (const options of [[], 'high', 5]) {
      throwsValidation(
        () => normalizeJob('n', {}, options as unknown as EnqueueOptions),
        'invalid_option',
        'options',
      )
    }
  })

  test('passes maxPayloadBytes on to the payload check', () => {
    throwsValidation(
      () => normalizeJob('n', { text: 'x'.repeat(100) }, {}, { maxPayloadBytes: 50 }),
      'payload_too_large',
      'payload',
    )
  })
})

describe('assertQueueList', () => {
  test('accepts a non-empty list of distinct valid names', () => {
    assert.doesNotThrow(() => assertQueueList(['critical', 'default', 'low']))
  })

  test('refuses a missing or empty list', () => {
    throwsValidation(() => assertQueueList([]), 'invalid_queue', 'queues')
    throwsValidation(() => assertQueueList('default'), 'invalid_queue', 'queues')
    throwsValidation(() => assertQueueList(undefined, 'worker.queues'), 'invalid_queue', 'worker.queues')
  })

  test('names the position of a bad queue name', () => {
    throwsValidation(() => assertQueueList(['a', 'bad name']), 'invalid_queue', 'queues[1]')
    throwsValidation(() => assertQueueList(['a', 3]), 'invalid_queue', 'queues[1]')
  })

  test('refuses a queue listed twice, naming the repeat', () => {
    const error = throwsValidation(() => assertQueueList(['a', 'b', 'a']), 'invalid_queue', 'queues[2]')
    assert.match(error.message, /listed twice/)
  })
})

describe('assertName', () => {
  test('uses invalid_queue unless told the code', () => {
    throwsValidation(() => assertName('', 'queue'), 'invalid_queue', 'queue')
    throwsValidation(() => assertName('', 'name', 'invalid_name'), 'invalid_name', 'name')
  })
})

describe('ValidationError', () => {
  test('is a FerryError whose name, code, field and message say what was wrong', () => {
    const error = throwsValidation(() => withOptions({ priority: 'high' }), 'invalid_priority', 'priority')
    assert.ok(error instanceof FerryError)
    assert.ok(error instanceof Error)
    assert.equal(error.name, 'ValidationError')
    assert.match(
      error.message,
      /^priority: must be an integer from -2147483648 to 2147483647 \(got "high"\)$/,
    )
  })
})

describe('assertKnownKeys', () => {
  const KNOWN = ['schema', 'poolSize', 'migrate']

  test('accepts an object of known keys, some or none of them', () => {
    assertKnownKeys({ schema: 'a', poolSize: 2, migrate: undefined }, KNOWN, '')
    assertKnownKeys({}, KNOWN, '')
  })

  test('refuses an unknown key with invalid_option, naming it and listing the known ones', () => {
    const error = throwsValidation(
      () => assertKnownKeys({ schema: 'a', colour: 1 }, KNOWN, ''),
      'invalid_option',
      'colour',
    )
    assert.equal(error.message, 'colour: unknown option (known options: schema, poolSize, migrate)')
  })

  test('puts the path of a nested object before the key', () => {
    throwsValidation(
      () => assertKnownKeys({ base: 10 }, ['baseMs', 'factor'], 'backoff'),
      'invalid_option',
      'backoff.base',
    )
  })

  test('suggests the known key a misspelling is one or two edits from', () => {
    const cases: [string, string][] = [
      ['shema', 'schema'], // a letter left out
      ['poolSzie', 'poolSize'], // two letters swapped
      ['poolsize', 'poolSize'], // case alone
      ['migrat', 'migrate'],
      ['ppolSise', 'poolSize'], // two letters wrong
    ]
    for (const [typo, meant] of cases) {
      const error = throwsValidation(() => assertKnownKeys({ [typo]: 1 }, KNOWN, ''), 'invalid_option', typo)
      assert.equal(
        error.message,
        `${typo}: unknown option, did you mean ${meant}? (known options: schema, poolSize, migrate)`,
      )
    }
  })

  test('suggests nothing when no known key is close, or two are equally close', () => {
    for (const [key, known] of [
      ['colour', KNOWN],
      ['shemata', KNOWN], // three edits
      ['ab', ['ac', 'ad']], // a tie
      ['x', ['y']], // one letter is no evidence
    ] as const) {
      const error = throwsValidation(() => assertKnownKeys({ [key]: 1 }, known, ''), 'invalid_option', key)
      assert.doesNotMatch(error.message, /did you mean/)
    }
  })

  test('says so when an object takes no options at all', () => {
    const error = throwsValidation(
      () => assertKnownKeys({ family: '6' }, [], 'url'),
      'invalid_option',
      'url.family',
    )
    assert.equal(error.message, 'url.family: unknown option (none are known here)')
  })

  test('refuses what is not an object of options, naming where it was', () => {
    for (const value of [null, undefined, 'fast', 3, ['schema']]) {
      throwsValidation(() => assertKnownKeys(value, KNOWN, ''), 'invalid_option', 'options')
      throwsValidation(() => assertKnownKeys(value, KNOWN, 'backoff'), 'invalid_option', 'backoff')
    }
  })

  test('sees keys that would shadow Object.prototype as the unknown keys they are', () => {
    throwsValidation(
      () => assertKnownKeys(JSON.parse('{"__proto__": 1}'), KNOWN, ''),
      'invalid_option',
      '__proto__',
    )
    throwsValidation(() => assertKnownKeys({ toString: 1 }, KNOWN, ''), 'invalid_option', 'toString')
  })
})

describe('optionKeys', () => {
  interface Options {
    a?: number
    b: string
  }

  test('lists the keys of an options type, in the order written', () => {
    assert.deepEqual(optionKeys<Options>({ b: true, a: true }), ['b', 'a'])
  })

  test('holds the list to the type: a missing or an extra key does not compile', () => {
    // @ts-expect-error a key of the type is missing from the list
    optionKeys<Options>({ a: true })
    // @ts-expect-error the type has no key c
    optionKeys<Options>({ a: true, b: true, c: true })
  })
})

describe('assertInteger and parseInteger', () => {
  test('take safe integers within the range, its ends included', () => {
    assertInteger(1, 'size', { min: 1 })
    assertInteger(0, 'prefetch', { min: 0, max: 10 })
    assertInteger(10, 'prefetch', { min: 0, max: 10 })
    assertInteger(-5, 'priority')
    assert.equal(parseInteger(' 42 ', '--limit', { min: 1 }), 42)
    assert.equal(parseInteger('-3', '--priority'), -3)
  })

  test('say in words what the range allows, and what they got', () => {
    const cases: [unknown, Parameters<typeof assertInteger>[2], string][] = [
      [0, { min: 1 }, 'must be a positive integer (got 0)'],
      [-1, { min: 0 }, 'must be a non-negative integer (got -1)'],
      [1.5, {}, 'must be an integer (got 1.5)'],
      ['7', { min: 0, max: 9 }, 'must be an integer from 0 to 9 (got "7")'],
      [2, { min: 3 }, 'must be an integer of at least 3 (got 2)'],
      [2 ** 53, { min: 1 }, `must be a positive integer (got ${2 ** 53})`],
      [NaN, { max: 5 }, 'must be an integer of at most 5 (got NaN)'],
    ]
    for (const [value, range, message] of cases) {
      const error = throwsValidation(() => assertInteger(value, 'n', range), 'invalid_option', 'n')
      assert.equal(error.message, `n: ${message}`)
    }
    // A job's own options keep their codes.
    throwsValidation(
      () => assertInteger(1.5, 'priority', {}, 'invalid_priority'),
      'invalid_priority',
      'priority',
    )
  })

  test('parseInteger takes decimal digits only and quotes the text as typed', () => {
    for (const text of ['ten', '', '1e3', '0x10', '1.0', '5 5']) {
      const error = throwsValidation(
        () => parseInteger(text, '--limit', { min: 1 }),
        'invalid_option',
        '--limit',
      )
      assert.equal(error.message, `--limit: ${JSON.stringify(text)} is not a positive integer`)
    }
    const tooBig = throwsValidation(
      () => parseInteger('10001', '--prefetch', { min: 0, max: 10_000 }),
      'invalid_option',
      '--prefetch',
    )
    assert.equal(tooBig.message, '--prefetch: "10001" is not an integer from 0 to 10000')
  })
})

describe('normalizeJob: how long a unique key holds', () => {
  test('keeps each mode, and a debounced job runs debounceMs from now', () => {
    assert.equal(withOptions({ uniqueKey: 'k', uniqueUntil: 'finished' }).uniqueUntil, 'finished')
    const throttled = withOptions({ uniqueKey: 'k', uniqueForMs: 999.5 })
    assert.deepEqual([throttled.uniqueUntil, throttled.uniqueForMs], ['purged', 1000])
    const debounced = withOptions({ uniqueKey: 'k', debounceMs: 5000 })
    assert.deepEqual(
      [debounced.uniqueUntil, debounced.debounceMs, debounced.delayMs],
      ['started', 5000, 5000],
    )
    assert.equal(
      withOptions({ uniqueKey: 'k', debounceMs: 1, uniqueUntil: 'finished' }).uniqueUntil,
      'finished',
    )
  })

  test('refuses a mode without a key, a bad mode, and modes that cannot go together, naming the field', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ uniqueUntil: 'started' }, 'uniqueUntil'],
      [{ uniqueForMs: 1 }, 'uniqueForMs'],
      [{ debounceMs: 1 }, 'debounceMs'],
      [{ uniqueKey: 'k', uniqueUntil: 'never' }, 'uniqueUntil'],
      [{ uniqueKey: 'k', uniqueForMs: Infinity }, 'uniqueForMs'],
      [{ uniqueKey: 'k', uniqueForMs: 1, uniqueUntil: 'started' }, 'uniqueForMs'],
      [{ uniqueKey: 'k', uniqueForMs: 1, debounceMs: 1 }, 'uniqueForMs'],
      [{ uniqueKey: 'k', debounceMs: 1, uniqueUntil: 'purged' }, 'uniqueUntil'],
      [{ uniqueKey: 'k', debounceMs: 1, runAt: 0 }, 'debounceMs'],
      [{ uniqueKey: 'k', debounceMs: '5s' }, 'debounceMs'],
    ]
    for (const [options, field] of cases)
      throwsValidation(() => withOptions(options), 'invalid_option', field)
  })
})
