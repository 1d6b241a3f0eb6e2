import assert from 'node:assert/strict'
import { describe, test } from 'node:test'

import { DEFAULT_MAX_PAYLOAD_BYTES } from './job.js'
import { MAX_PAYLOAD_DEPTH, serializePayload } from './payload.js'
import { normalizeJob } from './validate.js'
import { throwsValidation } from '../../tests/support/validation.js'

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

describe('serializePayload', () => {
  test('returns the JSON text of plain values, arrays and objects', () => {
    assert.equal(serializePayload(null), 'null')
    assert.equal(serializePayload(0), '0')
    assert.equal(serializePayload('é'), '"é"')
    assert.equal(serializePayload(false), 'false')
    assert.equal(serializePayload({ a: [1, 'two', { three: true }] }), '{"a":[1,"two",{"three":true}]}')
    assert.equal(serializePayload(Object.assign(Object.create(null), { bare: 1 })), '{"bare":1}')
  })

  test('accepts a Date anywhere and stores it as its ISO text', () => {
    const born = new Date(Date.UTC(1990, 4, 17))
    assert.equal(serializePayload(born), '"1990-05-17T00:00:00.000Z"')
    assert.equal(serializePayload({ user: { born } }), '{"user":{"born":"1990-05-17T00:00:00.000Z"}}')
  })

  test('drops an undefined object property, as JSON does', () => {
    assert.equal(serializePayload({ a: 1, b: undefined }), '{"a":1}')
  })

  test('refuses an undefined payload', () => {
    throwsValidation(() => serializePayload(undefined), 'invalid_payload', 'payload')
  })

  test('refuses NaN and Infinity and names the path to them', () => {
    throwsValidation(() => serializePayload({ a: { b: NaN } }), 'invalid_payload', 'payload.a.b')
    throwsValidation(() => serializePayload({ a: { b: Infinity } }), 'invalid_payload', 'payload.a.b')
    throwsValidation(() => serializePayload([1, -Infinity]), 'invalid_payload', 'payload[1]')
    throwsValidation(() => serializePayload(NaN), 'invalid_payload', 'payload')
  })

  test('refuses undefined in an array, which JSON would turn into null', () => {
    throwsValidation(
      () => serializePayload({ list: [1, 2, undefined] }),
      'invalid_payload',
      'payload.list[2]',
    )
    // eslint-disable-next-line no-sparse-arrays -- a hole reads as undefined: it must be refused too
    throwsValidation(() => serializePayload([1, , 3]), 'invalid_payload', 'payload[1]')
  })

  test('refuses functions, symbols and BigInts', () => {
    throwsValidation(() => serializePayload({ f: () => 1 }), 'invalid_payload', 'payload.f')
    throwsValidation(() => serializePayload({ s: Symbol('s') }), 'invalid_payload', 'payload.s')
    throwsValidation(() => serializePayload({ n: [10n] }), 'invalid_payload', 'payload.n[0]')
    throwsValidation(() => serializePayload(() => 1), 'invalid_payload', 'payload')
  })

  test('refuses a cycle where it closes', () => {
    const node: Record<string, unknown> = { name: 'root', children: [] }
    ;(node.children as unknown[]).push({ parent: node })
    throwsValidation(() => serializePayload(node), 'invalid_payload', 'payload.children[0].parent')
  })

  test('accepts the same object twice when it is not a cycle', () => {
    const shared = { x: 1 }
    assert.equal(serializePayload({ a: shared, b: [shared] }), '{"a":{"x":1},"b":[{"x":1}]}')
  })

  test('refuses Map, Set, Error and class instances, which JSON would turn into {}', () => {
    throwsValidation(() => serializePayload({ m: new Map([['k', 1]]) }), 'invalid_payload', 'payload.m')
    throwsValidation(() => serializePayload({ s: new Set([1]) }), 'invalid_payload', 'payload.s')
    throwsValidation(() => serializePayload({ e: new Error('boom') }), 'invalid_payload', 'payload.e')
    const error = throwsValidation(() => serializePayload([new Point(1, 2)]), 'invalid_payload', 'payload[0]')
    assert.match(error.message, /Point/)
  })

  test('checks what toJSON returns', () => {
    const ok = { toJSON: () => ({ v: 1 }) }
    assert.equal(serializePayload({ ok }), '{"ok":{"v":1}}')
    const bad = { toJSON: () => new Map() }
    throwsValidation(() => serializePayload({ bad }), 'invalid_payload', 'payload.bad')
  })

  test('uses the field it is given in error paths', () => {
    throwsValidation(
      () => serializePayload({ a: NaN }, 'jobs[2].payload'),
      'invalid_payload',
      'jobs[2].payload.a',
    )
  })

  test('accepts a payload of exactly maxBytes of UTF-8 and refuses one byte more', () => {
    assert.equal(serializePayload('abcdefgh', 'payload', 10), '"abcdefgh"')
    throwsValidation(() => serializePayload('abcdefghi', 'payload', 10), 'payload_too_large', 'payload')
    // 'é' is 2 bytes of UTF-8: the limit counts bytes, not characters.
    assert.equal(serializePayload('éééé', 'payload', 10), '"éééé"')
    const error = throwsValidation(
      () => serializePayload('ééééé', 'payload', 10),
      'payload_too_large',
      'payload',
    )
    assert.match(error.message, /12 bytes/)
  })

  test('refuses a payload over the default limit of 1 MiB', () => {
    assert.equal(DEFAULT_MAX_PAYLOAD_BYTES, 1024 * 1024)
    throwsValidation(
      () => serializePayload({ blob: 'x'.repeat(1024 * 1024) }),
      'payload_too_large',
      'payload',
    )
  })
})

/** `levels` arrays one within another around `inner`: nestedArrays(2, 1) is [[1]]. */
function nestedArrays(levels: number, inner: unknown = null): unknown {
  let value = inner
  for (let i = 0; i < levels; i++) value = [value]
  return value
}

describe('serializePayload: deep and hostile values', () => {
  test('accepts arrays and objects nested MAX_PAYLOAD_DEPTH levels deep and refuses one level more', () => {
    assert.equal(MAX_PAYLOAD_DEPTH, 1000)
    const deepest = nestedArrays(MAX_PAYLOAD_DEPTH, 7)
    assert.equal(serializePayload(deepest), `${'['.repeat(1000)}7${']'.repeat(1000)}`)
    const error = throwsValidation(
      () => serializePayload(nestedArrays(MAX_PAYLOAD_DEPTH + 1, 7)),
      'invalid_payload',
      'payload',
    )
    assert.match(error.message, /^payload: is nested more than 1000 levels deep/)
    let objects: unknown = 'leaf'
    for (let i = 0; i < MAX_PAYLOAD_DEPTH + 1; i++) objects = { child: objects }
    throwsValidation(() => serializePayload(objects), 'invalid_payload', 'payload')
  })

  test('refuses a bad value just past the depth the quick check covers, with its path', () => {
    // Levels 60 to 70 straddle where the quick check (isPlainJson) hands over to the full walk.
    for (let depth = 60; depth <= 70; depth++) {
      let good: unknown = 1
      let bad: unknown = NaN
      for (let i = 0; i < depth; i++) {
        good = { a: good }
        bad = { a: bad }
      }
      assert.equal(serializePayload(good), JSON.stringify(good))
      throwsValidation(() => serializePayload(bad), 'invalid_payload', `payload${'.a'.repeat(depth)}`)
    }
  })

  test('refuses a payload nested 100,000 deep with a ValidationError, not a stack overflow', () => {
    // JSON.parse builds such a value without recursion; the check must not recurse either.
    const parsed: unknown = JSON.parse(`${'{"a":['.repeat(50_000)}1${']}'.repeat(50_000)}`)
    throwsValidation(() => serializePayload(parsed), 'invalid_payload', 'payload')
    throwsValidation(() => serializePayload(nestedArrays(100_000), 'result'), 'invalid_payload', 'result')
    throwsValidation(
      () => normalizeJob('n', nestedArrays(100_000), {}, { field: 'jobs[4]' }),
      'invalid_payload',
      'jobs[4].payload',
    )
  })

  test('refuses a toJSON that returns a new object with a toJSON of its own, endlessly', () => {
    const endless = (): object => ({ toJSON: endless })
    throwsValidation(() => serializePayload({ value: endless() }), 'invalid_payload', 'payload')
  })

  test('finds a cycle that closes 900 levels down, naming where it closes', () => {
    const root: Record<string, unknown> = {}
    let node = root
    for (let i = 0; i < 899; i++) {
      const child: Record<string, unknown> = {}
      node.n = child
      node = child
    }
    node.back = [root]
    throwsValidation(() => serializePayload(root), 'invalid_payload', `payload${'.n'.repeat(899)}.back[0]`)
  })

  test('refuses a payload whose toJSON or getter throws with a ValidationError whose cause is what was thrown', () => {
    const boom = new TypeError('boom')
    const error = throwsValidation(
      () =>
        serializePayload({
          date: {
            toJSON() {
              throw boom
            },
          },
        }),
      'invalid_payload',
      'payload',
    )
    assert.match(error.message, /^payload: could not be read as JSON \(TypeError: boom\)$/)
    assert.equal(error.cause, boom)
    const getter = {
      get value(): never {
        throw 'not an Error' // what a careless getter may do
      },
    }
    throwsValidation(() => serializePayload(getter, 'result'), 'invalid_payload', 'result')
  })

  test('still finds a bad value after a deep branch that was fine', () => {
    const payload = { deep: nestedArrays(MAX_PAYLOAD_DEPTH - 1), list: [1, { x: undefined }, NaN] }
    throwsValidation(() => serializePayload(payload), 'invalid_payload', 'payload.list[2]')
  })
})
