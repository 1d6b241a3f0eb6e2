import assert from 'node:assert/strict'
import { test } from 'node:test'

import { SharedReading } from './shared-reading.js'

function counter() {
  let reads = 0
  let release: (() => void) | null = null
  const read = () =>
    new Promise<number>((resolve) => {
      const n = ++reads
      release = () => resolve(n)
    })
  return { read, reads: () => reads, release: () => release!() }
}

test('every page asking at once shares one reading, and a fresh one is served as it is', async () => {
  const source = counter()
  const shared = new SharedReading(source.read, 1000)
  const asks = [shared.get(0), shared.get(0), shared.get(0)]
  source.release()
  assert.deepEqual(await Promise.all(asks), [1, 1, 1])
  assert.equal(await shared.get(Date.now()), 1)
  assert.equal(source.reads(), 1)
})

test('a stale reading is served at once while one new reading replaces it in the background', async () => {
  const source = counter()
  const shared = new SharedReading(source.read, 1000)
  const first = shared.get()
  source.release()
  await first
  const later = Date.now() + 5000
  assert.equal(await shared.get(later), 1)
  assert.equal(await shared.get(later), 1)
  assert.equal(source.reads(), 2)
  source.release()
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(await shared.get(Date.now()), 2)
})

test('after forget() the next page waits for a new reading', async () => {
  const source = counter()
  const shared = new SharedReading(source.read, 60_000)
  const first = shared.get()
  source.release()
  await first
  shared.forget()
  const next = shared.get()
  source.release()
  assert.equal(await next, 2)
})

test('a reading that took long is kept longer: readings take at most the given share of the time', async () => {
  let reads = 0
  const shared = new SharedReading(async () => {
    reads++
    const until = Date.now() + 50
    while (Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 5))
    return reads
  }, 100)
  await shared.get()
  // It took about 50 ms: at a 5 % share, it is served for about a second, not 100 ms.
  assert.equal(await shared.get(Date.now() + 500), 1)
  assert.equal(reads, 1)
  assert.equal(await shared.get(Date.now() + 5000), 1)
  assert.equal(reads, 2)
})
