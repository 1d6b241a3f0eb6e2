import assert from 'node:assert/strict'
import { test } from 'node:test'

import { newLeaseTokenBase } from './lease-tokens.js'

test('a lease token base is 96 random bits as 16 base64url characters', () => {
  for (let i = 0; i < 1000; i++) assert.match(newLeaseTokenBase(), /^[A-Za-z0-9_-]{16}$/)
})

test('lease token bases do not repeat, across refills of the pool', () => {
  const bases = new Set<string>()
  for (let i = 0; i < 20_000; i++) bases.add(newLeaseTokenBase())
  assert.equal(bases.size, 20_000)
})
