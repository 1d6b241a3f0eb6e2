import assert from 'node:assert/strict'
import { test } from 'node:test'

import { TickBatcher, type BatchLimits } from './tick-batcher.js'

/** A batcher whose flushes wait until released, recording each batch and how many ran at once. */
function recordingBatcher(limits?: BatchLimits) {
  const batches: number[][] = []
  const gates: (() => void)[] = []
  let running = 0
  let mostAtOnce = 0
  const batcher = new TickBatcher<number, string>(async (items) => {
    batches.push([...items])
    running++
    mostAtOnce = Math.max(mostAtOnce, running)
    await new Promise<void>((resolve) => gates.push(resolve))
    running--
    if (items.includes(-1)) throw new Error('flush failed')
    return items.map((item) => `done ${item}`)
  }, limits)
  /** Lets every flush, pending or yet to start, run to its end. */
  const releaseAll = async (): Promise<void> => {
    let drained = false
    void batcher.drain().then(() => (drained = true))
    while (!drained) {
      gates.splice(0).forEach((release) => release())
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
  return { batcher, batches, releaseAll, mostAtOnce: () => mostAtOnce }
}

test('calls made in one tick share one flush, and each caller gets its own result', async () => {
  const { batcher, batches, releaseAll } = recordingBatcher()
  const one = batcher.submit(1)
  const many = batcher.submitMany([2, 3])
  await releaseAll()
  assert.deepEqual(batches, [[1, 2, 3]])
  assert.equal(await one, 'done 1')
  assert.deepEqual(await many, ['done 2', 'done 3'])
})

test('calls made while a flush runs gather into the next one', async () => {
  const { batcher, batches, releaseAll } = recordingBatcher()
  const first = batcher.submit(1)
  await new Promise((resolve) => setImmediate(resolve))
  const later = [batcher.submit(2), batcher.submit(3)]
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(batches, [[1]], 'the second batch waits for the first flush')
  await releaseAll()
  assert.deepEqual(batches, [[1], [2, 3]])
  assert.deepEqual(await Promise.all([first, ...later]), ['done 1', 'done 2', 'done 3'])
})

test('maxItems cuts a tick into flushes at call boundaries, never inside one submitMany', async () => {
  const { batcher, batches, releaseAll } = recordingBatcher({ maxItems: 3, maxInFlight: 10 })
  const calls = [
    batcher.submit(1),
    batcher.submitMany([2, 3]),
    batcher.submitMany([4, 5, 6, 7]),
    batcher.submit(8),
  ]
  await releaseAll()
  assert.deepEqual(batches, [[1, 2, 3], [4, 5, 6, 7], [8]])
  assert.deepEqual(await Promise.all(calls), [
    'done 1',
    ['done 2', 'done 3'],
    ['done 4', 'done 5', 'done 6', 'done 7'],
    'done 8',
  ])
})

test('maxBytes cuts a tick into flushes by the weight callers give, never inside one submitMany', async () => {
  const { batcher, batches, releaseAll } = recordingBatcher({ maxBytes: 10, maxInFlight: 10 })
  const calls = [
    batcher.submit(1, 4),
    batcher.submit(2, 4),
    batcher.submit(3, 4),
    batcher.submitMany([4, 5], 20),
    batcher.submit(6, 1),
  ]
  assert.deepEqual(batches, [[1, 2], [3], [4, 5]], 'a flush that reaches maxBytes starts at once')
  await releaseAll()
  assert.deepEqual(batches, [[1, 2], [3], [4, 5], [6]])
  assert.deepEqual(await Promise.all(calls), ['done 1', 'done 2', 'done 3', ['done 4', 'done 5'], 'done 6'])
})

test('items without a weight count for nothing against maxBytes, and maxItems still cuts', async () => {
  const { batcher, batches, releaseAll } = recordingBatcher({ maxItems: 2, maxBytes: 10, maxInFlight: 10 })
  const calls = [1, 2, 3].map((item) => batcher.submit(item))
  await releaseAll()
  assert.deepEqual(batches, [[1, 2], [3]])
  assert.deepEqual(await Promise.all(calls), ['done 1', 'done 2', 'done 3'])
})

test('a flush that is full starts at once, before the tick ends', async () => {
  const { batcher, batches, releaseAll } = recordingBatcher({ maxItems: 2, maxInFlight: 2 })
  void batcher.submit(1)
  assert.deepEqual(batches, [], 'a flush that is not full waits for the tick')
  void batcher.submit(2)
  assert.deepEqual(batches, [[1, 2]])
  void batcher.submitMany([3, 4, 5])
  assert.deepEqual(batches, [
    [1, 2],
    [3, 4, 5],
  ])
  void batcher.submit(6)
  void batcher.submit(7)
  assert.deepEqual(
    batches,
    [
      [1, 2],
      [3, 4, 5],
    ],
    'no more than maxInFlight at once',
  )
  await releaseAll()
  assert.deepEqual(batches, [
    [1, 2],
    [3, 4, 5],
    [6, 7],
  ])
})

test('at most maxInFlight flushes run at once, started in submission order', async () => {
  const { batcher, batches, releaseAll, mostAtOnce } = recordingBatcher({ maxItems: 1, maxInFlight: 2 })
  const calls = [1, 2, 3, 4, 5].map((item) => batcher.submit(item))
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(batches, [[1], [2]])
  await releaseAll()
  assert.equal(mostAtOnce(), 2)
  assert.deepEqual(batches, [[1], [2], [3], [4], [5]])
  assert.deepEqual(await Promise.all(calls), ['done 1', 'done 2', 'done 3', 'done 4', 'done 5'])
})

test('a failed flush rejects only the callers it carried', async () => {
  const { batcher, releaseAll } = recordingBatcher({ maxItems: 1, maxInFlight: 2 })
  const ok = batcher.submit(1)
  const failed = assert.rejects(batcher.submit(-1), /flush failed/)
  await releaseAll()
  assert.equal(await ok, 'done 1')
  await failed
})

test('drain resolves once everything submitted has been flushed', async () => {
  const { batcher, batches, releaseAll } = recordingBatcher({ maxItems: 1, maxInFlight: 1 })
  void batcher.submit(1)
  void batcher.submit(2)
  let drained = false
  const draining = batcher.drain().then(() => (drained = true))
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(drained, false)
  await releaseAll()
  await draining
  assert.deepEqual(batches, [[1], [2]])
})

test('with followUpWindowMs, a caller that awaits each call has the next one flushed before the event loop turns', async () => {
  const batches: number[][] = []
  const batcher = new TickBatcher<number, number>(
    async (items) => {
      batches.push([...items])
      return [...items]
    },
    { followUpWindowMs: 60_000 },
  )
  await batcher.submit(1)
  let turned = false
  setImmediate(() => (turned = true))
  // Two callers resumed by one flush: both next calls go in the one flush that follows it.
  await Promise.all([batcher.submit(2), batcher.submit(3)])
  const [a, b] = await Promise.all([
    batcher.submit(4).then(() => batcher.submit(6)),
    batcher.submit(5).then(() => batcher.submit(7)),
  ])
  assert.equal(turned, false, 'no turn of the event loop between the flushes')
  assert.deepEqual([a, b], [6, 7])
  assert.deepEqual(batches, [[1], [2, 3], [4, 5], [6, 7]])
})

test('without followUpWindowMs, or past it, the next call waits for the event loop to turn', async () => {
  for (const limits of [{}, { followUpWindowMs: 0 }]) {
    const batcher = new TickBatcher<number, number>(async (items) => [...items], limits)
    await batcher.submit(1)
    let turned = false
    setImmediate(() => (turned = true))
    await batcher.submit(2)
    assert.equal(turned, true)
  }
})

test('with followUpWindowMs, calls made in one tick still share one flush', async () => {
  const { batcher, batches, releaseAll } = recordingBatcher({ followUpWindowMs: 60_000 })
  const calls = [batcher.submit(1), batcher.submit(2)]
  await releaseAll()
  assert.deepEqual(await Promise.all(calls), ['done 1', 'done 2'])
  assert.deepEqual(batches, [[1, 2]])
})

test('limits out of range are refused', () => {
  const flush = async (items: readonly number[]) => items
  assert.throws(() => new TickBatcher(flush, { maxItems: 0 }), RangeError)
  assert.throws(() => new TickBatcher(flush, { maxBytes: 0 }), RangeError)
  assert.throws(() => new TickBatcher(flush, { maxInFlight: 0 }), RangeError)
  assert.throws(() => new TickBatcher(flush, { maxInFlight: 1.5 }), RangeError)
  assert.throws(() => new TickBatcher(flush, { followUpWindowMs: -1 }), RangeError)
  assert.throws(() => new TickBatcher(flush, { followUpWindowMs: NaN }), RangeError)
})
