import assert from 'node:assert/strict'
import { test } from 'node:test'

import { newLeaseToken } from './lease.js'

test('a lease token is 24 lower-case hex characters (96 bits)', () => {
  for (let i = 0; i < 1000; i++) assert.match(newLeaseToken(), /^[0-9a-f]{24}$/)
})

test('lease tokens are distinct, also across refills of the random pool', () => {
  // The pool holds 4096 bytes, 341 tokens: 20,000 tokens cross it many times.
  const tokens = new Set<string>()
  for (let i = 0; i < 20_000; i++) tokens.add(newLeaseToken())
  assert.equal(tokens.size, 20_000)
})
