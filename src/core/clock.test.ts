import assert from 'node:assert/strict'
import { test } from 'node:test'

import { ManualClock, systemClock } from './clock.js'

test('a ManualClock starts at 0 unless told otherwise', () => {
  assert.equal(new ManualClock().now(), 0)
  assert.equal(new ManualClock(1_700_000_000_000).now(), 1_700_000_000_000)
  assert.equal(new ManualClock(new Date(Date.UTC(2030, 0, 1))).now(), Date.UTC(2030, 0, 1))
})

test('a ManualClock stands still until advanced', async () => {
  const clock = new ManualClock(1000)
  await new Promise((resolve) => setTimeout(resolve, 5))
  assert.equal(clock.now(), 1000)
  clock.advance(250)
  assert.equal(clock.now(), 1250)
  clock.advance(0)
  assert.equal(clock.now(), 1250)
})

test('a ManualClock can be set to a number or a Date, also backwards', () => {
  const clock = new ManualClock(5000)
  clock.set(100)
  assert.equal(clock.now(), 100)
  clock.set(new Date(42))
  assert.equal(clock.now(), 42)
})

test('the system clock reads epoch milliseconds', () => {
  const before = Date.now()
  const now = systemClock.now()
  const after = Date.now()
  assert.ok(Number.isInteger(now))
  assert.ok(before <= now && now <= after)
})
