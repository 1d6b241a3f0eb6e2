/** The PostgreSQL store's binary enqueue parameters and its enqueue results, without a server. */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import type { NewJob } from '../../src/core/job.js'
import {
  binaryArrays,
  binaryEnqueueArrays,
  enqueueArrays,
  enqueueResults,
} from '../../src/store/postgres/postgres-encoding.js'
import { newJob as job } from '../support/store-harness.js'

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
    assert.deepEqual(binaryEnqueueArrays(jobs), enqueueArrays(jobs, binaryArrays))
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
