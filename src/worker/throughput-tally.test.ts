import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MINUTE_MS, THROUGHPUT_KEEP_MS } from '../store/kernel/workers.js'
import { ThroughputTally } from './throughput-tally.js'

const T = 1_800_000_000_000 // a whole minute

test('counts outcomes per minute and queue, and forgets them once taken', () => {
  const tally = new ThroughputTally()
  tally.add('mail', 'completed', T)
  tally.add('mail', 'completed', T + MINUTE_MS - 1)
  tally.add('mail', 'failed', T + 5)
  tally.add('mail', 'completed', T + MINUTE_MS)
  tally.add('default', 'failed', T)
  assert.deepEqual(tally.take(), [
    { minute: T, queue: 'mail', completed: 2, failed: 1 },
    { minute: T + MINUTE_MS, queue: 'mail', completed: 1, failed: 0 },
    { minute: T, queue: 'default', completed: 0, failed: 1 },
  ])
  assert.deepEqual(tally.take(), [])
})

test('keeps the counts of a failed heartbeat for the next, but not minutes older than the store keeps', () => {
  const tally = new ThroughputTally()
  tally.add('mail', 'completed', T)
  const unsent = tally.take()
  tally.add('mail', 'completed', T + 10)
  tally.putBack(
    [...unsent, { minute: T - THROUGHPUT_KEEP_MS, queue: 'mail', completed: 9, failed: 0 }],
    T + 20,
  )
  assert.deepEqual(tally.take(), [{ minute: T, queue: 'mail', completed: 2, failed: 0 }])
})
