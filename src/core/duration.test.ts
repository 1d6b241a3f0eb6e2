import assert from 'node:assert/strict'
import { test } from 'node:test'

import { parseByteSize, parseDuration } from './duration.js'
import { ValidationError } from './errors.js'

test('parses durations in every unit', () => {
  assert.equal(parseDuration('250ms', 'f'), 250)
  assert.equal(parseDuration('5s', 'f'), 5000)
  assert.equal(parseDuration('10m', 'f'), 600_000)
  assert.equal(parseDuration('2h', 'f'), 7_200_000)
  assert.equal(parseDuration('7d', 'f'), 604_800_000)
  assert.equal(parseDuration('1w', 'f'), 604_800_000)
})

test('reads a bare number as milliseconds', () => {
  assert.equal(parseDuration('1500', 'f'), 1500)
  assert.equal(parseDuration('0', 'f'), 0)
})

test('accepts fractions and rounds to whole milliseconds', () => {
  assert.equal(parseDuration('1.5s', 'f'), 1500)
  assert.equal(parseDuration('0.25m', 'f'), 15_000)
  assert.equal(parseDuration('2.6', 'f'), 3)
})

test('ignores whitespace around the duration', () => {
  assert.equal(parseDuration('  5s\n', 'f'), 5000)
})

test('rejects what is not a duration with invalid_option on the given field', () => {
  for (const text of ['', 'soon', '5 s', '-5s', '5S', '5y', '1e3', 's', '.5s', '5s5']) {
    assert.throws(
      () => parseDuration(text, 'worker.pollInterval'),
      (error: unknown) =>
        error instanceof ValidationError &&
        error.code === 'invalid_option' &&
        error.field === 'worker.pollInterval' &&
        error.message.includes('is not a duration'),
      `"${text}" was accepted`,
    )
  }
})

test('parses byte sizes in every unit, in any case', () => {
  assert.equal(parseByteSize('100', 'f'), 100)
  assert.equal(parseByteSize('100b', 'f'), 100)
  assert.equal(parseByteSize('64kb', 'f'), 64 * 1024)
  assert.equal(parseByteSize('64KB', 'f'), 64 * 1024)
  assert.equal(parseByteSize('512MB', 'f'), 512 * 1024 ** 2)
  assert.equal(parseByteSize('1GB', 'f'), 1024 ** 3)
  assert.equal(parseByteSize('1.5kb', 'f'), 1536)
  assert.equal(parseByteSize(' 10 MB ', 'f'), 10 * 1024 ** 2)
})

test('rejects what is not a byte size with invalid_option on the given field', () => {
  for (const text of ['', 'lots', '5TB', '-1', 'MB', '1,5MB']) {
    assert.throws(
      () => parseByteSize(text, 'maxRss'),
      (error: unknown) =>
        error instanceof ValidationError && error.code === 'invalid_option' && error.field === 'maxRss',
      `"${text}" was accepted`,
    )
  }
})
