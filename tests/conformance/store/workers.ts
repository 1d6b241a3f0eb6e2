/**
 * What the worker registry and throughput promise: a heartbeat writes a worker's record, which
 * lasts its ttl unless renewed, and adds its per-minute counts to the store's, where several
 * workers' counts of a minute and queue add up; a day of minutes is kept. One area of the Store
 * conformance suite (tests/conformance/store.case.ts runs them all).
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import { ValidationError } from '../../../src/core/errors.js'
import type { HeartbeatParams, Store, ThroughputCount, WorkerInfo } from '../../../src/store/store.js'
import { SECOND, MINUTE, HOUR, type ConformanceCases } from './kit.js'

const DAY = 24 * HOUR
const TTL_MS = 15 * SECOND

/** A whole minute near now: the counts' minutes are whole minutes. */
function wholeMinute(): number {
  return Math.floor(Date.now() / MINUTE) * MINUTE
}

function workerInfo(overrides: Partial<WorkerInfo> = {}): WorkerInfo {
  return {
    workerId: 'host-a:100:abc',
    host: 'host-a',
    pid: 100,
    queues: ['default', 'mail'],
    concurrency: 4,
    strategy: 'inline',
    startedAt: 1_700_000_000_000,
    jobs: [],
    activeCount: 0,
    ...overrides,
  }
}

function count(minute: number, queue: string, completed: number, failed: number): ThroughputCount {
  return { minute, queue, completed, failed }
}

async function rejectsField(call: Promise<unknown>, field: string): Promise<void> {
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof ValidationError, `a ValidationError, not ${String(error)}`)
    assert.equal(error.field, field, error.message)
    return true
  })
}

/** Every count of the day up to the minute of `now`, which is the longest range a call may ask for. */
function lastDay(store: Store, now: number): Promise<ThroughputCount[]> {
  return store.throughput({ since: now - DAY + MINUTE, until: now + MINUTE, now })
}

export function workersCases({ test }: ConformanceCases): void {
  describe('worker registry', () => {
    test('lists a worker after its heartbeat, with when the store heard from it', async ({ store }) => {
      const t = wholeMinute()
      assert.deepEqual(await store.workers({ now: t }), [])
      const worker = workerInfo({
        jobs: [{ id: '7', queue: 'mail', name: 'send', startedAt: t - SECOND }],
        activeCount: 3,
      })
      await store.heartbeat({ worker, counts: [], ttlMs: TTL_MS, now: t })
      assert.deepEqual(await store.workers({ now: t }), [{ ...worker, heartbeatAt: t }])
    })

    test('replaces what a worker said with its next heartbeat', async ({ store }) => {
      const t = wholeMinute()
      await store.heartbeat({ worker: workerInfo(), counts: [], ttlMs: TTL_MS, now: t })
      const busier = workerInfo({
        jobs: [{ id: '9', queue: 'default', name: 'resize', startedAt: t + SECOND }],
        activeCount: 1,
      })
      await store.heartbeat({ worker: busier, counts: [], ttlMs: TTL_MS, now: t + 5 * SECOND })
      assert.deepEqual(await store.workers({ now: t + 5 * SECOND }), [
        { ...busier, heartbeatAt: t + 5 * SECOND },
      ])
    })

    test('forgets a worker once its ttl passed without a heartbeat, and keeps one that renewed', async ({
      store,
    }) => {
      const t = wholeMinute()
      const quiet = workerInfo({ workerId: 'quiet', host: 'host-b' })
      const alive = workerInfo({ workerId: 'alive', host: 'host-c' })
      await store.heartbeat({ worker: quiet, counts: [], ttlMs: TTL_MS, now: t })
      await store.heartbeat({ worker: alive, counts: [], ttlMs: TTL_MS, now: t })
      assert.equal((await store.workers({ now: t + TTL_MS - 1 })).length, 2, 'both live until their ttl')
      await store.heartbeat({ worker: alive, counts: [], ttlMs: TTL_MS, now: t + 10 * SECOND })
      const later = t + TTL_MS + SECOND
      assert.deepEqual(
        (await store.workers({ now: later })).map((w) => w.workerId),
        ['alive'],
      )
      // A heartbeat past the quiet one's ttl deletes its record; it stays gone.
      await store.heartbeat({ worker: alive, counts: [], ttlMs: TTL_MS, now: later })
      assert.deepEqual(
        (await store.workers({ now: later })).map((w) => w.workerId),
        ['alive'],
      )
    })

    test('lists workers by host, then pid', async ({ store }) => {
      const t = wholeMinute()
      const workers = [
        workerInfo({ workerId: 'w1', host: 'b', pid: 5 }),
        workerInfo({ workerId: 'w2', host: 'a', pid: 20 }),
        workerInfo({ workerId: 'w3', host: 'a', pid: 3 }),
      ]
      for (const worker of workers) await store.heartbeat({ worker, counts: [], ttlMs: TTL_MS, now: t })
      assert.deepEqual(
        (await store.workers({ now: t })).map((w) => w.workerId),
        ['w3', 'w2', 'w1'],
      )
    })

    test('removes a worker on removeWorker, and takes an unknown id in its stride', async ({ store }) => {
      const t = wholeMinute()
      await store.heartbeat({ worker: workerInfo(), counts: [], ttlMs: TTL_MS, now: t })
      await store.removeWorker({ workerId: 'host-a:100:abc' })
      assert.deepEqual(await store.workers({ now: t }), [])
      await store.removeWorker({ workerId: 'never-seen' })
    })
  })

  describe('throughput', () => {
    test('adds up the counts of one minute and queue across heartbeats and workers', async ({ store }) => {
      const t = wholeMinute()
      const a = workerInfo({ workerId: 'a' })
      const b = workerInfo({ workerId: 'b' })
      await store.heartbeat({ worker: a, counts: [count(t, 'mail', 3, 1)], ttlMs: TTL_MS, now: t })
      await store.heartbeat({ worker: b, counts: [count(t, 'mail', 2, 0)], ttlMs: TTL_MS, now: t })
      await store.heartbeat({
        worker: a,
        // The same minute twice in one heartbeat adds up too.
        counts: [count(t, 'mail', 1, 1), count(t, 'mail', 0, 2), count(t, 'default', 5, 0)],
        ttlMs: TTL_MS,
        now: t + SECOND,
      })
      assert.deepEqual(await lastDay(store, t + SECOND), [count(t, 'default', 5, 0), count(t, 'mail', 6, 4)])
    })

    test('answers the minutes of its range, oldest first, of one queue or every queue', async ({ store }) => {
      const t = wholeMinute()
      const counts = [
        count(t - 3 * MINUTE, 'mail', 1, 0),
        count(t - 2 * MINUTE, 'default', 2, 0),
        count(t - 2 * MINUTE, 'mail', 3, 1),
        count(t - MINUTE, 'mail', 4, 0),
        count(t, 'default', 5, 5),
      ]
      // Given out of order: the answer is in order all the same.
      await store.heartbeat({ worker: workerInfo(), counts: counts.toReversed(), ttlMs: TTL_MS, now: t })
      assert.deepEqual(await lastDay(store, t), counts)
      assert.deepEqual(
        await store.throughput({ since: t - 2 * MINUTE, until: t, now: t }),
        counts.slice(1, 4),
        'since is in the range, until is not',
      )
      assert.deepEqual(
        await store.throughput({ since: t - HOUR, queue: 'mail', now: t }),
        [counts[0], counts[2], counts[3]],
        'one queue; until defaults to now',
      )
      assert.deepEqual(await store.throughput({ since: t - HOUR, queue: 'other', now: t }), [])
    })

    test('keeps a day of minutes: older counts are neither answered nor written', async ({ store }) => {
      const t = wholeMinute()
      const worker = workerInfo()
      await store.heartbeat({ worker, counts: [count(t, 'mail', 1, 0)], ttlMs: TTL_MS, now: t })
      await store.heartbeat({
        worker,
        counts: [count(t + MINUTE, 'mail', 2, 0)],
        ttlMs: TTL_MS,
        now: t + 2 * MINUTE,
      })
      const dayLater = t + DAY + MINUTE
      assert.deepEqual(
        await store.throughput({ since: t, until: t + DAY, now: dayLater }),
        [count(t + MINUTE, 'mail', 2, 0)],
        'the minute past a day is not answered',
      )
      await store.heartbeat({
        worker,
        counts: [count(t, 'mail', 7, 0), count(t + DAY - MINUTE, 'mail', 1, 0)],
        ttlMs: TTL_MS,
        now: dayLater,
      })
      assert.deepEqual(await store.throughput({ since: t, until: t + DAY, now: dayLater }), [
        count(t + MINUTE, 'mail', 2, 0),
        count(t + DAY - MINUTE, 'mail', 1, 0),
      ])
      // Read as of an earlier time: the old minute was deleted, not only hidden.
      assert.deepEqual(await store.throughput({ since: t, until: t + MINUTE, now: t + MINUTE }), [])
    })

    test('refuses bad params, naming the field, and writes nothing', async ({ store }) => {
      const t = wholeMinute()
      const good: HeartbeatParams = {
        worker: workerInfo(),
        counts: [count(t, 'mail', 1, 0)],
        ttlMs: TTL_MS,
        now: t,
      }
      const bad: [string, HeartbeatParams][] = [
        ['worker.pid', { ...good, worker: workerInfo({ pid: -1 }) }],
        ['worker.workerId', { ...good, worker: workerInfo({ workerId: '' }) }],
        ['worker.queues[0]', { ...good, worker: workerInfo({ queues: ['no spaces'] }) }],
        ['worker.concurrency', { ...good, worker: workerInfo({ concurrency: 0 }) }],
        [
          'worker.jobs[0].startedAt',
          {
            ...good,
            worker: workerInfo({
              jobs: [{ id: '1', queue: 'mail', name: 'send', startedAt: -5 }],
              activeCount: 1,
            }),
          },
        ],
        [
          'worker.activeCount',
          { ...good, worker: workerInfo({ jobs: [{ id: '1', queue: 'mail', name: 'send', startedAt: t }] }) },
        ],
        ['counts[1].minute', { ...good, counts: [count(t, 'mail', 1, 0), count(t + 1, 'mail', 1, 0)] }],
        ['counts[0].failed', { ...good, counts: [count(t, 'mail', 1, -1)] }],
        ['counts[0].queue', { ...good, counts: [count(t, '', 1, 0)] }],
        ['ttlMs', { ...good, ttlMs: 0 }],
        ['ttlMs', { ...good, ttlMs: 1.5 }],
      ]
      for (const [field, params] of bad) await rejectsField(store.heartbeat(params), field)
      await rejectsField(store.heartbeat({ ...good, extra: 1 } as HeartbeatParams), 'extra')
      assert.deepEqual(await store.workers({ now: t }), [], 'no record written')
      assert.deepEqual(await lastDay(store, t), [], 'no count written')

      await rejectsField(store.removeWorker({ workerId: '' }), 'workerId')
      await rejectsField(store.throughput({ since: t, until: t - 1 }), 'until')
      await rejectsField(store.throughput({ since: t - DAY - 1, until: t }), 'until')
      await rejectsField(store.throughput({ since: Number.NaN }), 'since')
      await rejectsField(store.throughput({ since: t, queue: 'a b' }), 'queue')
    })
  })
}
