/**
 * What the admin calls promise: listJobs, stats, retry, cancel, purge and control.
 * One area of the Store conformance suite (tests/conformance/store.case.ts runs them all).
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import { FerryError, ValidationError } from '../../../src/core/errors.js'
import type { JobId } from '../../../src/core/job.js'
import type { QueueStats } from '../../../src/store/store.js'
import { sortIds } from '../../support/store-harness.js'
import { within } from '../../support/async.js'
import { getJob, waitReason } from '../../support/store-calls.js'
import {
  SECOND,
  MINUTE,
  HOUR,
  UNKNOWN_ID,
  enqueueJobs,
  enqueueJob,
  claimAt,
  renewAt,
  completed,
  finishNew,
  getExisting,
  view,
  ids,
  one,
  stat,
  allPages,
  type ConformanceCases,
} from './kit.js'

export function adminCases({ test }: ConformanceCases): void {
  describe('listJobs with ids', () => {
    test('returns null for an unknown id', async ({ store }) => {
      assert.equal(await getJob(store, UNKNOWN_ID), null)
      await enqueueJob(store, Date.now())
      assert.equal(await getJob(store, UNKNOWN_ID), null)
    })

    test('returns the jobs asked for in the order asked, without unknown or malformed ids', async ({
      store,
    }) => {
      const t = Date.now()
      const [a, b, c] = await enqueueJobs(store, t, [{}, {}, {}])
      const page = await store.listJobs({ ids: [c!, UNKNOWN_ID, a!, 'not-an-id', b!] })
      assert.deepEqual(ids(page.jobs), [c, a, b])
      assert.equal(page.nextCursor, null)
      for (const job of page.jobs) assert.deepEqual(view(job), view(await getExisting(store, job.id)))
      assert.deepEqual(await store.listJobs({ ids: [] }), { jobs: [], nextCursor: null })
    })

    test('refuses ids together with a filter or a cursor', async ({ store }) => {
      const [id] = await enqueueJobs(store, Date.now(), [{}])
      for (const extra of [{ state: 'ready' }, { queue: 'default' }, { cursor: id }] as const) {
        await assert.rejects(
          store.listJobs({ ids: [id!], ...extra }),
          (error: unknown) => error instanceof ValidationError && error.field === 'ids',
        )
      }
    })
  })

  describe('listJobs', () => {
    test('lists jobs newest first, as getJob returns them', async ({ store }) => {
      const t = Date.now()
      const enqueued: JobId[] = []
      for (let i = 0; i < 4; i++) enqueued.push(await enqueueJob(store, t + i, { payload: `{"i":${i}}` }))
      await claimAt(store, t + 10, { limit: 1 })
      const page = await store.listJobs()
      assert.deepEqual(ids(page.jobs), [...enqueued].reverse())
      assert.equal(page.nextCursor, null)
      for (const job of page.jobs) assert.deepEqual(view(job), view(await getExisting(store, job.id)))
    })

    test('filters by state and by queue', async ({ store }) => {
      const t = Date.now()
      const done = await finishNew(store, t, 'completed', { queue: 'a' })
      const doneB = await finishNew(store, t, 'completed', { queue: 'b' })
      const [readyA, readyB, scheduledA] = await enqueueJobs(store, t, [
        { queue: 'a' },
        { queue: 'b' },
        { queue: 'a', delayMs: MINUTE },
      ])
      assert.deepEqual(sortIds(ids((await store.listJobs({ state: 'ready' })).jobs)), [readyA, readyB])
      assert.deepEqual(ids((await store.listJobs({ state: 'scheduled' })).jobs), [scheduledA])
      assert.deepEqual(sortIds(ids((await store.listJobs({ queue: 'b' })).jobs)), [doneB, readyB])
      assert.deepEqual(ids((await store.listJobs({ state: 'completed', queue: 'a' })).jobs), [done])
      assert.deepEqual(await store.listJobs({ state: 'dead' }), { jobs: [], nextCursor: null })
      assert.deepEqual(await store.listJobs({ queue: 'nowhere' }), { jobs: [], nextCursor: null })
    })

    test('returns at most limit jobs, the newest', async ({ store }) => {
      const t = Date.now()
      const enqueued = await enqueueJobs(store, t, [{}, {}, {}, {}, {}])
      const page = await store.listJobs({ limit: 2 })
      assert.deepEqual(ids(page.jobs), [enqueued[4], enqueued[3]])
      assert.notEqual(page.nextCursor, null)
    })

    test('pages through every job exactly once with the cursor', async ({ store }) => {
      const t = Date.now()
      const enqueued = await enqueueJobs(
        store,
        t,
        Array.from({ length: 7 }, () => ({})),
      )
      const pages = await allPages(store, { limit: 3 })
      assert.deepEqual(
        pages.map((p) => p.length),
        [3, 3, 1],
      )
      assert.deepEqual(pages.flat(), [...enqueued].reverse())
    })

    test('pages through a filtered list with the cursor', async ({ store }) => {
      const t = Date.now()
      const enqueued = await enqueueJobs(
        store,
        t,
        Array.from({ length: 9 }, (_, i) => ({ queue: i % 2 === 0 ? 'a' : 'b' })),
      )
      const pages = await allPages(store, { queue: 'a', limit: 2 })
      assert.deepEqual(
        pages.map((p) => p.length),
        [2, 2, 1],
      )
      assert.deepEqual(pages.flat(), enqueued.filter((_, i) => i % 2 === 0).reverse())
    })

    test('returns an empty page with a null cursor when nothing matches', async ({ store }) => {
      assert.deepEqual(await store.listJobs(), { jobs: [], nextCursor: null })
      assert.deepEqual(await store.listJobs({ state: 'active', limit: 5 }), { jobs: [], nextCursor: null })
    })
  })

  describe('stats', () => {
    test('counts jobs per queue and state, with due scheduled jobs as ready', async ({ store }) => {
      const t = Date.now()
      await enqueueJobs(store, t, [
        { queue: 'b', priority: 10 },
        { queue: 'b', priority: 10 },
        { queue: 'b', priority: 10 },
      ])
      const claimed = await claimAt(store, t, { queues: ['b'], limit: 3, leaseMs: HOUR })
      assert.equal(claimed.length, 3)
      const [toComplete, toKill] = claimed
      assert.deepEqual(
        (
          await store.settle({
            settlements: [
              completed(toComplete),
              {
                kind: 'dead',
                id: toKill!.id,
                leaseToken: toKill!.leaseToken,
                error: { kind: 'error', message: 'x' },
              },
            ],
            now: t,
          })
        ).settled,
        ['ok', 'ok'],
      )
      await enqueueJobs(store, t, [
        { queue: 'b' },
        { queue: 'b', runAt: t + HOUR },
        { queue: 'b', runAt: t + SECOND },
        { queue: 'a' },
      ])
      const finished = { completed: 1, dead: 1, recentCompletedCount: 1, recentDeadCount: 1 }
      assert.deepEqual(await store.stats({ now: t + 2 * SECOND }), [
        stat('a', { ready: 1, oldestReadyAt: t }),
        stat('b', { ready: 2, scheduled: 1, active: 1, oldestReadyAt: t, ...finished }),
      ])
      assert.deepEqual(await store.stats({ now: t }), [
        stat('a', { ready: 1, oldestReadyAt: t }),
        stat('b', { ready: 1, scheduled: 2, active: 1, oldestReadyAt: t, ...finished }),
      ])
    })

    test('counts jobs that finished within the recent window as throughput', async ({ store }) => {
      const t = Date.now()
      await enqueueJobs(store, t, [{ queue: 'q' }, { queue: 'q' }, { queue: 'q' }])
      const [early, late, failed] = await claimAt(store, t, { queues: ['q'], limit: 3, leaseMs: HOUR })
      await store.settle({ settlements: [completed(early)], now: t })
      await store.settle({ settlements: [completed(late)], now: t + 50 * SECOND })
      await store.settle({
        settlements: [
          {
            kind: 'dead',
            id: failed!.id,
            leaseToken: failed!.leaseToken,
            error: { kind: 'error', message: 'x' },
          },
        ],
        now: t + 50 * SECOND,
      })
      assert.deepEqual(await store.stats({ now: t + 70 * SECOND }), [
        stat('q', { completed: 2, dead: 1, recentCompletedCount: 1, recentDeadCount: 1 }),
      ])
      assert.deepEqual(await store.stats({ now: t + 70 * SECOND, recentWindowMs: 80 * SECOND }), [
        stat('q', {
          completed: 2,
          dead: 1,
          recentCompletedCount: 2,
          recentDeadCount: 1,
          recentWindowMs: 80_000,
        }),
      ])
    })

    test('sorts queues by name', async ({ store }) => {
      const t = Date.now()
      await enqueueJobs(store, t, [{ queue: 'zeta' }, { queue: 'alpha' }, { queue: 'mu' }, { queue: 'beta' }])
      const queues = (await store.stats({ now: t })).map((s) => s.queue)
      assert.deepEqual(queues, ['alpha', 'beta', 'mu', 'zeta'])
    })

    test('gives the run time of the oldest ready job of each queue, whatever its priority or group', async ({
      store,
    }) => {
      const t = Date.now()
      // The oldest is behind a job of higher priority (the one next in line), grouped, or a
      // scheduled job that has come due: each must be seen.
      await enqueueJobs(store, t, [
        { queue: 'by-priority', priority: 5, runAt: t - 1 * SECOND },
        { queue: 'by-priority', priority: 0, runAt: t - 9 * SECOND },
        { queue: 'by-priority', priority: -3, runAt: t - 4 * SECOND },
        { queue: 'by-group', runAt: t - 2 * SECOND },
        { queue: 'by-group', group: 'tenant-1', runAt: t - 7 * SECOND },
        { queue: 'by-group', group: 'tenant-2', priority: 1, runAt: t - 3 * SECOND },
        { queue: 'due', runAt: t - 1 * SECOND },
        { queue: 'due', runAt: t + 5 * SECOND },
        { queue: 'none-ready', runAt: t + HOUR },
      ])
      const oldest = (stats: QueueStats[]) => Object.fromEntries(stats.map((s) => [s.queue, s.oldestReadyAt]))
      assert.deepEqual(oldest(await store.stats({ now: t })), {
        'by-group': t - 7 * SECOND,
        'by-priority': t - 9 * SECOND,
        due: t - 1 * SECOND,
        'none-ready': null,
      })
      // Six seconds on, the scheduled job of 'due' has come due: it is ready since its run time.
      const [claimed] = await claimAt(store, t, { queues: ['due'], limit: 1, leaseMs: HOUR })
      assert.equal(claimed!.runAt, t - 1 * SECOND)
      assert.equal(
        one((await store.stats({ now: t + 6 * SECOND })).filter((s) => s.queue === 'due')).oldestReadyAt,
        t + 5 * SECOND,
      )
    })

    test('returns no queues for an empty store', async ({ store }) => {
      assert.deepEqual(await store.stats({ now: Date.now() }), [])
    })
  })

  describe('retry', () => {
    test('moves the dead jobs given by id back to ready with fresh attempts', async ({ store }) => {
      const t = Date.now()
      const dead1 = await finishNew(store, t, 'dead')
      const dead2 = await finishNew(store, t, 'dead')
      const done = await finishNew(store, t, 'completed')
      const ready = await enqueueJob(store, t)
      const scheduled = await enqueueJob(store, t, { delayMs: HOUR })
      const before = new Map<JobId, unknown>()
      for (const id of [dead2, done, ready, scheduled]) before.set(id, view(await getExisting(store, id)))

      assert.equal(
        await store.retry({ ids: [dead1, done, ready, scheduled, UNKNOWN_ID], now: t + SECOND }),
        1,
      )
      const revived = await getExisting(store, dead1)
      assert.equal(revived.state, 'ready')
      assert.equal(revived.attempts, 0)
      for (const [id, was] of before)
        assert.deepEqual(view(await getExisting(store, id)), was, `job ${id} unchanged`)

      const claimed = await claimAt(store, t + SECOND, { limit: 10 })
      assert.deepEqual(sortIds(ids(claimed)), sortIds([dead1, ready]))
      assert.equal(claimed.find((j) => j.id === dead1)?.attempts, 1)
    })

    test('moves every dead job, or every dead job of one queue, with allDead', async ({ store }) => {
      const t = Date.now()
      const a1 = await finishNew(store, t, 'dead', { queue: 'a' })
      const a2 = await finishNew(store, t, 'dead', { queue: 'a' })
      const b1 = await finishNew(store, t, 'dead', { queue: 'b' })
      const done = await finishNew(store, t, 'completed', { queue: 'b' })
      assert.equal(await store.retry({ allDead: true, queue: 'b', now: t + SECOND }), 1)
      assert.equal((await getExisting(store, b1)).state, 'ready')
      assert.equal((await getExisting(store, a1)).state, 'dead')
      assert.equal(await store.retry({ allDead: true, now: t + SECOND }), 2)
      for (const id of [a1, a2, b1]) {
        const job = await getExisting(store, id)
        assert.equal(job.state, 'ready')
        assert.equal(job.attempts, 0)
      }
      assert.equal((await getExisting(store, done)).state, 'completed')
      assert.equal(await store.retry({ allDead: true, now: t + SECOND }), 0)
    })
  })

  describe('cancel', () => {
    test('ends scheduled and ready jobs as dead with a cancelled error', async ({ store }) => {
      const t = Date.now()
      const [scheduled, ready] = await enqueueJobs(store, t, [{ delayMs: MINUTE }, {}])
      assert.equal(await store.cancel({ ids: [scheduled!, ready!], now: t + 10 }), 2)
      for (const id of [scheduled!, ready!]) {
        const job = await getExisting(store, id)
        assert.equal(job.state, 'dead')
        assert.equal(job.lastError?.kind, 'cancelled')
        assert.equal(job.finishedAt, t + 10)
      }
      assert.deepEqual(await claimAt(store, t + HOUR), [])
    })

    test("revokes an active job's lease so its worker's renew and settle get 'lease_lost'", async ({
      store,
    }) => {
      const t = Date.now()
      await enqueueJob(store, t)
      const job = one(await claimAt(store, t))
      assert.equal(await store.cancel({ ids: [job.id], now: t + 10 }), 1)
      const cancelled = view(await getExisting(store, job.id))
      assert.equal(cancelled.state, 'dead')
      assert.equal(cancelled.lastError?.kind, 'cancelled')
      assert.equal(cancelled.finishedAt, t + 10)
      assert.deepEqual(await renewAt(store, t + 20, job), ['lease_lost'])
      assert.deepEqual((await store.settle({ settlements: [completed(job)], now: t + 20 })).settled, [
        'lease_lost',
      ])
      assert.deepEqual(await store.recoverExpired({ now: t + HOUR }), {
        retried: [],
        dead: [],
        clamped: 0,
        expired: [],
      })
      assert.deepEqual(view(await getExisting(store, job.id)), cancelled)
    })

    test('leaves completed and dead jobs alone and does not count them', async ({ store }) => {
      const t = Date.now()
      const done = await finishNew(store, t, 'completed')
      const dead = await finishNew(store, t, 'dead')
      const before = [view(await getExisting(store, done)), view(await getExisting(store, dead))]
      assert.equal(await store.cancel({ ids: [done, dead, UNKNOWN_ID], now: t + 10 }), 0)
      assert.deepEqual([view(await getExisting(store, done)), view(await getExisting(store, dead))], before)
    })
  })

  describe('admin parameters', () => {
    test('a misspelt parameter of an admin call is refused, and nothing is changed', async ({ store }) => {
      const t = Date.now()
      const dead = await finishNew(store, t, 'dead')
      const done = await finishNew(store, t, 'completed')
      const before = [view(await getExisting(store, dead)), view(await getExisting(store, done))]
      const refused = async (call: Promise<unknown>, field: string): Promise<void> => {
        await assert.rejects(
          call,
          (error: unknown) =>
            error instanceof FerryError &&
            error.code === 'invalid_option' &&
            error.message.startsWith(`${field}: unknown option`),
        )
      }
      // Without the check, olderThan would be dropped and every dead job deleted.
      await refused(store.purge({ state: 'dead', olderThan: HOUR } as never), 'olderThan')
      await refused(store.retry({ ids: [dead], quee: 'x' } as never), 'quee')
      await refused(store.cancel({ ids: [done], nw: t } as never), 'nw')
      await refused(store.listJobs({ sate: 'dead' } as never), 'sate')
      await refused(store.stats({ recentWindow: 1 } as never), 'recentWindow')
      await refused(store.control({ requestStop: true, when: t } as never), 'when')
      assert.deepEqual([view(await getExisting(store, dead)), view(await getExisting(store, done))], before)
    })
  })

  describe('purge', () => {
    test('deletes completed jobs and no others', async ({ store }) => {
      const t = Date.now()
      const c1 = await finishNew(store, t, 'completed')
      const c2 = await finishNew(store, t, 'completed', { queue: 'other' })
      const dead = await finishNew(store, t, 'dead')
      const activeId = await enqueueJob(store, t, { queue: 'active' })
      const active = one(await claimAt(store, t, { queues: ['active'] }, activeId))
      const [ready, scheduled] = await enqueueJobs(store, t, [{}, { delayMs: HOUR }])
      const kept = [dead, active.id, ready!, scheduled!]
      const before = await Promise.all(kept.map(async (id) => view(await getExisting(store, id))))
      assert.equal(await store.purge({ state: 'completed', now: t + SECOND }), 2)
      assert.equal(await getJob(store, c1), null)
      assert.equal(await getJob(store, c2), null)
      assert.deepEqual(await Promise.all(kept.map(async (id) => view(await getExisting(store, id)))), before)
      assert.equal(await store.purge({ state: 'completed', now: t + SECOND }), 0)
    })

    test('deletes dead jobs when asked for dead ones', async ({ store }) => {
      const t = Date.now()
      const dead = await finishNew(store, t, 'dead')
      const cancelled = await enqueueJob(store, t, { delayMs: HOUR })
      assert.equal(await store.cancel({ ids: [cancelled], now: t }), 1)
      const done = await finishNew(store, t, 'completed')
      assert.equal(await store.purge({ state: 'dead', now: t + SECOND }), 2)
      assert.equal(await getJob(store, dead), null)
      assert.equal(await getJob(store, cancelled), null)
      assert.equal((await getExisting(store, done)).state, 'completed')
    })

    test('deletes only jobs that finished at least olderThanMs ago', async ({ store }) => {
      const t = Date.now()
      const j1 = await finishNew(store, t + 1 * SECOND, 'completed')
      const j3 = await finishNew(store, t + 3 * SECOND, 'completed')
      const j5 = await finishNew(store, t + 5 * SECOND, 'completed')
      assert.equal(await store.purge({ state: 'completed', olderThanMs: 3 * SECOND, now: t + 6 * SECOND }), 2)
      assert.equal(await getJob(store, j1), null)
      assert.equal(await getJob(store, j3), null, 'finished exactly olderThanMs ago')
      assert.equal((await getExisting(store, j5)).state, 'completed')
      assert.equal(
        await store.purge({ state: 'completed', olderThanMs: 3 * SECOND, now: t + 8 * SECOND - 1 }),
        0,
      )
      assert.equal(await store.purge({ state: 'completed', olderThanMs: 3 * SECOND, now: t + 8 * SECOND }), 1)
    })

    test('deletes only jobs of the given queue', async ({ store }) => {
      const t = Date.now()
      const a1 = await finishNew(store, t, 'dead', { queue: 'a' })
      const a2 = await finishNew(store, t, 'dead', { queue: 'a' })
      const b = await finishNew(store, t, 'dead', { queue: 'b' })
      assert.equal(await store.purge({ state: 'dead', queue: 'a', now: t }), 2)
      assert.equal(await getJob(store, a1), null)
      assert.equal(await getJob(store, a2), null)
      assert.equal((await getExisting(store, b)).state, 'dead')
    })
  })

  describe('control', () => {
    test('answers a stop request with the record as the request left it', async ({ store }) => {
      const t = Date.now()
      assert.deepEqual(await store.control({ requestStop: true, now: t }), {
        stopRequestedAt: t,
        queues: [],
        schedulesVersion: 0,
      })
      assert.deepEqual(await store.control(), { stopRequestedAt: t, queues: [], schedulesVersion: 0 })
    })

    test('reports null before any stop request and the latest request after', async ({ store }) => {
      const t = Date.now()
      assert.equal((await store.control()).stopRequestedAt, null)
      await store.control({ requestStop: true, now: t })
      assert.equal((await store.control()).stopRequestedAt, t)
      await store.control({ requestStop: true, now: t + SECOND })
      assert.equal((await store.control()).stopRequestedAt, t + SECOND)
    })

    test('moves the stop time forward with every request, even one with an earlier clock', async ({
      store,
    }) => {
      const t = Date.now()
      await store.control({ requestStop: true, now: t })
      await store.control({ requestStop: true, now: t - SECOND })
      const second = (await store.control()).stopRequestedAt
      assert.ok(second !== null && second > t, `expected a time after ${t}, got ${second}`)
    })

    test('is seen by, and wakes, a worker waiting through another store instance', async (h) => {
      const peer = await h.openPeer()
      const waiting = waitReason(h.store, { queues: ['default'], timeoutMs: 2 * SECOND })
      const t = Date.now()
      await peer.control({ requestStop: true, now: t })
      assert.equal(await within(3 * SECOND, 'waitForWork', waiting), 'notified')
      assert.equal((await h.store.control()).stopRequestedAt, t)
    })

    test("wakes a store's first wait for a stop requested through another instance since it opened", async (h) => {
      const peer = await h.openPeer()
      const t = Date.now()
      await peer.control({ requestStop: true, now: t })
      const waiting = waitReason(h.store, { queues: ['default'], timeoutMs: 2 * SECOND })
      assert.equal(await within(3 * SECOND, 'waitForWork', waiting), 'notified')
    })
  })
}
