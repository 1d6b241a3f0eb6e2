/** The PostgreSQL store's binary enqueue parameters and its enqueue results, without a server. */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import type { NewJob } from '../../src/core/job.js'
import {
  binaryEnqueueArrays,
  binaryTextArray,
  enqueueArrays,
  enqueueResults,
  type ArrayEncoding,
} from '../../src/store/postgres/postgres-encoding.js'
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

test('enqueueResults reads ids and created flags in input order', () => {
  assert.deepEqual(enqueueResults({ ids: '7,12,9', created: 'tft' }), [
    { id: '7', created: true },
    { id: '12', created: false },
    { id: '9', created: true },
  ])
})
