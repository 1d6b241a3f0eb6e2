/** The PostgreSQL store's binary enqueue parameters and its enqueue results, without a server. */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import type { NewJob } from '../../src/core/job.js'
import {
  binaryEnqueueArrays,
  binaryTextArray,
  enqueueArrays,
  enqueueResults,
  joinedEnqueueParams,
  type ArrayEncoding,
} from '../../src/store/postgres/postgres-enqueue-arrays.js'
import { newJob as job } from '../support/store-harness.js'

/**
 * A binary int4[] or int8[] written element by element with Buffer's own methods, as the
 * reference binaryEnqueueArrays's one-buffer encoding must equal: dimensions, has-null flag,
 * element type, length and lower bound, then each element's length (-1 for NULL) and bytes.
 */
function referenceIntegerArray(items: readonly (number | null)[], oid: 23 | 20): Buffer {
  const bytes = oid === 23 ? 4 : 8
  const header = Buffer.alloc(20)
  header.writeInt32BE(1, 0)
  header.writeInt32BE(items.includes(null) ? 1 : 0, 4)
  header.writeInt32BE(oid, 8)
  header.writeInt32BE(items.length, 12)
  header.writeInt32BE(1, 16)
  const elements = items.map((item) => {
    const element = Buffer.alloc(item === null ? 4 : 4 + bytes)
    element.writeInt32BE(item === null ? -1 : bytes, 0)
    if (item !== null && bytes === 4) element.writeInt32BE(item, 4)
    if (item !== null && bytes === 8) element.writeBigInt64BE(BigInt(item), 4)
    return element
  })
  return Buffer.concat([header, ...elements])
}

const referenceArrays: ArrayEncoding = {
  text: binaryTextArray,
  integer: (items) => referenceIntegerArray(items, 23),
  bigint: (items) => referenceIntegerArray(items, 20),
}

test("binaryEnqueueArrays writes each array's bytes as the encoders of one array each do", () => {
  const batches: NewJob[][] = [
    [job()],
    [
      job({ queue: 'mail', name: 'send', payload: '{"to":"é✓"}', priority: -(2 ** 31), uniqueKey: 'k-ü' }),
      job({ runAt: 2 ** 53 - 1, delayMs: 0, timeoutMs: 2 ** 31 - 1, maxAttempts: 1 }),
      job({ runAt: -5, delayMs: 86_400_000, priority: 2 ** 31 - 1, payload: '' }),
      job({ queue: 'mail', uniqueKey: '' }),
    ],
    // Groups and deadlines: their arrays are sent only for a batch with any (else NULL).
    [job({ group: 'tenant é✓' }), job()],
    [job({ expiresAt: 2 ** 53 - 1 }), job({ expiresInMs: 60_000, group: '' }), job({ expiresAt: -5 })],
    // Metas too (a job's slot, its own backoff): NULL for a batch without any.
    [
      job({ backoff: { type: 'fixed', delayMs: 5 } }),
      job(),
      job({ schedule: { id: 'é', slot: 1, late: true } }),
    ],
  ]
  for (const jobs of batches) {
    assert.deepEqual(binaryEnqueueArrays(jobs), enqueueArrays(jobs, referenceArrays))
  }
})

test('binaryEnqueueArrays passes integers that are none of their column on as plain arrays', () => {
  const jobs = [job(), job({ priority: 0.5 })]
  const values = binaryEnqueueArrays(jobs)
  assert.deepEqual(values.slice(3, 8), [
    [0, 0.5],
    [null, null],
    [0, 0],
    [25, 25],
    [null, null],
  ])
  assert.ok(Buffer.isBuffer(values[2]), 'text stays binary')
})

test('joinedEnqueueParams joins each column, texts by U+001E and numbers by commas, NULL as an empty element', () => {
  const jobs = [
    job({ queue: 'mail', name: 'send', payload: '{"to":"é✓","cc":["a","b"]}', priority: -(2 ** 31) }),
    job({ runAt: 2 ** 50, delayMs: 0, timeoutMs: 2 ** 31 - 1, maxAttempts: 1 }),
    job({ delayMs: 86_400_000, priority: 2 ** 31 - 1, payload: '""' }),
  ]
  assert.deepEqual(joinedEnqueueParams(jobs), [
    'mail\x1edefault\x1edefault',
    'send\x1etest-job\x1etest-job',
    '{"to":"é✓","cc":["a","b"]}\x1e{"n":1}\x1e""',
    `${-(2 ** 31)},0,${2 ** 31 - 1}`,
    `,${2 ** 50},`,
    '0,0,86400000',
    '25,1,25',
    `,${2 ** 31 - 1},`,
    null,
    null,
    null,
    null,
  ])
  // Groups, deadlines and metas, only for a batch with any; a job without one is an empty element.
  const grouped = [
    job({ group: 'a, "b" ✓', expiresInMs: 60_000 }),
    job({ expiresAt: 2 ** 50, backoff: { type: 'list', delaysMs: [1, 2] } }),
    job(),
  ]
  assert.deepEqual(joinedEnqueueParams(grouped)!.slice(8), [
    'a, "b" ✓\x1e\x1e',
    `,${2 ** 50},`,
    '60000,,',
    '\x1e{"backoff":{"type":"list","delaysMs":[1,2]}}\x1e',
  ])
})

test('joinedEnqueueParams leaves to the arrays a batch with a unique key or a text holding its separator', () => {
  for (const odd of [
    job({ uniqueKey: 'k' }),
    job({ uniqueKey: '' }),
    job({ payload: '"a\x1eb"' }),
    job({ queue: 'a\x1eb' }),
    job({ name: 'a\x1eb' }),
    job({ group: 'a\x1eb' }),
  ]) {
    assert.equal(joinedEnqueueParams([job(), odd]), null, JSON.stringify(odd))
  }
})

test('enqueueResults reads ids and created flags in input order', () => {
  assert.deepEqual(enqueueResults({ ids: '7,12,9', created: 'tft' }), [
    { id: '7', created: true },
    { id: '12', created: false },
    { id: '9', created: true },
  ])
})
