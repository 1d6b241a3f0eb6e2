/**
 * The Store conformance suite: the real definition of the Store contract (src/store/store.ts). Every
 * backend's test file calls runStoreConformance with a harness; a backend that cannot pass a case lists
 * it in `skip` with a reason, and the case shows up as skipped.
 *
 * Written only against the Store interface and the core types: nothing here may know which backend
 * runs it. Time is passed as `now` wherever the contract allows, so no test sleeps to let time pass;
 * only waitForWork, which is about real time, waits for real (and briefly).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import { FerryError, ValidationError } from '../../src/core/errors.js'
import { emptyStats } from '../../src/store/kernel/stats.js'
import type { ClaimedJob, Job, JobError, JobId, NewJob } from '../../src/core/job.js'
import type { Settlement } from '../../src/core/outcome.js'
import {
  DELIVERY_LEASE_MS,
  type QueueStats,
  type Store,
  type WaitClaim,
  type WaitParams,
  type WaitResult,
} from '../../src/store/store.js'
import {
  newJob,
  sortIds,
  compareIds,
  within,
  type CreateHarness,
  type StoreHarness,
} from '../helpers/store-harness.js'
import { clampLeases, getJob, waitReason } from '../helpers/store-calls.js'

export interface SkipEntry {
  /** Test names, exactly as the suite spells them. */
  tests: string[]
  reason: string
}

export interface StoreConformanceOptions {
  /** Shown as the suite's title, e.g. 'SqliteStore'. */
  name: string
  createHarness: CreateHarness
  skip?: readonly SkipEntry[]
}

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const LEASE_MS = 5 * MINUTE
/** An id no test ever creates. */
const UNKNOWN_ID = '999999999'

export function runStoreConformance({ name, createHarness, skip = [] }: StoreConformanceOptions): void {
  const skipReasons = new Map<string, string>()
  for (const entry of skip) for (const title of entry.tests) skipReasons.set(title, entry.reason)
  const defined = new Set<string>()

  /** A test that manages its harness itself; skipped (visibly) when the backend lists it. */
  const bare = (title: string, body: () => Promise<void>): void => {
    if (defined.has(title)) throw new Error(`two conformance tests are named "${title}"`)
    defined.add(title)
    const reason = skipReasons.get(title)
    it(title, reason === undefined ? {} : { skip: reason }, body)
  }

  /** A test with a harness of its own, closed whatever happens. */
  const test = (title: string, body: (h: StoreHarness) => Promise<void>): void => {
    bare(title, async () => {
      const h = await createHarness()
      try {
        await body(h)
      } finally {
        await h.close()
      }
    })
  }

  /**
   * A test of waitForWork with a claim. On a store without capabilities.delivery it checks what
   * that promises instead: the store refuses the claim, so a worker is never handed jobs there.
   */
  const deliveryTest = (title: string, body: (h: StoreHarness, wait: WaitForJobs) => Promise<void>): void => {
    test(title, async (h) => {
      if (!h.store.capabilities.delivery) {
        const claim = { limit: 1, leaseMs: LEASE_MS, workerId: 'worker-1' }
        await assert.rejects(
          h.store.waitForWork({ queues: ['default'], timeoutMs: 10, claim }),
          (error: unknown) => error instanceof ValidationError && error.field === 'claim',
          'a store without delivery refuses a claim on its waits',
        )
        await assert.rejects(
          h.store.renew({ leases: [], leaseMs: LEASE_MS, delivered: true }),
          (error: unknown) => error instanceof ValidationError && error.field === 'delivered',
          'and taking delivered jobs',
        )
        return
      }
      await body(h, (params) => h.store.waitForWork(params))
    })
  }

  describe(`Store conformance: ${name}`, () => {
    describe('enqueue', () => {
      test('refuses a tx that is not a transaction it can join, and writes nothing', async ({ store }) => {
        await assert.rejects(
          store.enqueue({ jobs: [newJob()], tx: {} }),
          (error: unknown) => error instanceof ValidationError && error.field === 'tx',
        )
        if (!store.capabilities.transactionalEnqueue) {
          await assert.rejects(
            store.enqueue({ jobs: [newJob()], tx: {} }),
            /cannot enqueue inside a transaction/,
          )
        }
        assert.deepEqual((await store.listJobs()).jobs, [])
      })

      test('returns ids in input order that increase from one call to the next', async ({ store }) => {
        const t = Date.now()
        const first = await store.enqueue({
          jobs: [0, 1, 2].map((i) => newJob({ payload: JSON.stringify({ i }) })),
          now: t,
        })
        const second = await store.enqueue({ jobs: [newJob({ payload: '{"i":3}' })], now: t + 1 })
        const results = [...first, ...second]
        assert.equal(results.length, 4)
        for (const r of results) {
          assert.equal(r.created, true)
          assert.match(r.id, /^[0-9]+$/, 'job ids are decimal digits')
        }
        const ids = results.map((r) => r.id)
        for (let i = 1; i < ids.length; i++) {
          assert.equal(compareIds(ids[i - 1]!, ids[i]!), -1, `id ${ids[i]} comes after ${ids[i - 1]}`)
        }
        for (const [i, id] of ids.entries()) {
          assert.deepEqual(
            (await getExisting(store, id)).payload,
            { i },
            'the i-th id belongs to the i-th job',
          )
        }
      })

      test('stores every field of a new job and returns it from getJob', async ({ store }) => {
        const t = Date.now()
        const [result] = await store.enqueue({
          jobs: [
            newJob({
              queue: 'emails',
              name: 'send-welcome',
              payload: '{"to":"ada@example.com","tags":["a",{"x":null}],"s":"ünïcødé ✓"}',
              priority: 7,
              maxAttempts: 3,
              timeoutMs: 5000,
              uniqueKey: 'welcome:ada',
            }),
          ],
          now: t,
        })
        assert.ok(result)
        assert.deepEqual(view(await getExisting(store, result.id)), {
          id: result.id,
          queue: 'emails',
          name: 'send-welcome',
          payload: { to: 'ada@example.com', tags: ['a', { x: null }], s: 'ünïcødé ✓' },
          state: 'ready',
          priority: 7,
          runAt: t,
          attempts: 0,
          maxAttempts: 3,
          timeoutMs: 5000,
          uniqueKey: 'welcome:ada',
          lastError: null,
          result: null,
          workerId: null,
          leaseExpiresAt: null,
          createdAt: t,
          updatedAt: t,
          finishedAt: null,
        })
      })

      test('returns any JSON payload as the value it encodes', async ({ store }) => {
        const t = Date.now()
        const payloads = [
          'null',
          'true',
          '0',
          '-12.5',
          '"text"',
          '[]',
          '{}',
          '[1,"two",{"three":[3]}]',
          '{"deep":{"er":{"est":[true,false,null]}},"emoji":"🚀","quote":"\\"\\\\"}',
        ]
        const ids = await enqueueJobs(
          store,
          t,
          payloads.map((payload) => ({ payload })),
        )
        for (const [i, id] of ids.entries()) {
          assert.deepEqual((await getExisting(store, id)).payload, JSON.parse(payloads[i]!))
        }
      })

      test('keeps priority, maxAttempts and timeoutMs at the edges of their ranges', async ({ store }) => {
        const t = Date.now()
        const [high, low] = await enqueueJobs(store, t, [
          { priority: 2_147_483_647, maxAttempts: 1_000_000, timeoutMs: 2_147_483_647 },
          { priority: -2_147_483_648, maxAttempts: 1, timeoutMs: 1 },
        ])
        const h = await getExisting(store, high!)
        assert.deepEqual([h.priority, h.maxAttempts, h.timeoutMs], [2_147_483_647, 1_000_000, 2_147_483_647])
        const l = await getExisting(store, low!)
        assert.deepEqual([l.priority, l.maxAttempts, l.timeoutMs], [-2_147_483_648, 1, 1])
      })

      test('schedules a job with delayMs at now plus delayMs', async ({ store }) => {
        const t = Date.now()
        const [later, soon] = await enqueueJobs(store, t, [{ delayMs: 5 * SECOND }, { delayMs: 1 }])
        const a = await getExisting(store, later!)
        assert.equal(a.state, 'scheduled')
        assert.equal(a.runAt, t + 5 * SECOND)
        const b = await getExisting(store, soon!)
        assert.equal(b.state, 'scheduled')
        assert.equal(b.runAt, t + 1)
      })

      test('schedules a job with a future runAt at that time', async ({ store }) => {
        const t = Date.now()
        const id = await enqueueJob(store, t, { runAt: t + HOUR })
        const job = await getExisting(store, id)
        assert.equal(job.state, 'scheduled')
        assert.equal(job.runAt, t + HOUR)
      })

      test('makes a job ready when its runAt is now or in the past', async ({ store }) => {
        const t = Date.now()
        const [now, past] = await enqueueJobs(store, t, [{ runAt: t }, { runAt: t - MINUTE }])
        const a = await getExisting(store, now!)
        assert.equal(a.state, 'ready')
        assert.equal(a.runAt, t)
        const b = await getExisting(store, past!)
        assert.equal(b.state, 'ready')
        assert.equal(b.runAt, t - MINUTE)
      })

      test('returns the existing id with created false for a repeated uniqueKey and writes nothing', async ({
        store,
      }) => {
        const t = Date.now()
        const [first] = await store.enqueue({
          jobs: [newJob({ uniqueKey: 'k', payload: '{"v":1}' })],
          now: t,
        })
        assert.deepEqual(first, { id: first!.id, created: true })
        const statsBefore = await store.stats({ now: t })
        const again = await store.enqueue({
          jobs: [newJob({ uniqueKey: 'k', payload: '{"v":2}', priority: 9, delayMs: MINUTE })],
          now: t + SECOND,
        })
        assert.deepEqual(again, [{ id: first!.id, created: false }])
        const job = await getExisting(store, first!.id)
        assert.deepEqual(job.payload, { v: 1 }, 'the existing job is not overwritten')
        assert.equal(job.priority, 0)
        assert.equal(job.state, 'ready')
        assert.equal(job.updatedAt, t)
        assert.equal((await store.listJobs()).jobs.length, 1)
        assert.deepEqual(await store.stats({ now: t }), statsBefore)
      })

      test('returns one job for a uniqueKey given twice within one batch', async ({ store }) => {
        const t = Date.now()
        const results = await store.enqueue({
          jobs: [
            newJob({ uniqueKey: 'twice', payload: '{"v":1}' }),
            newJob({ payload: '{"v":2}' }),
            newJob({ uniqueKey: 'twice', payload: '{"v":3}' }),
          ],
          now: t,
        })
        assert.equal(results.length, 3)
        assert.equal(results[0]!.created, true)
        assert.equal(results[1]!.created, true)
        assert.deepEqual(results[2], { id: results[0]!.id, created: false })
        assert.deepEqual((await getExisting(store, results[0]!.id)).payload, { v: 1 })
        const { jobs } = await store.listJobs()
        assert.deepEqual(sortIds(jobs.map((j) => j.id)), sortIds([results[0]!.id, results[1]!.id]))
        assert.deepEqual(await store.stats({ now: t }), [stat('default', { ready: 2 })])
      })

      test('holds a uniqueKey while its job is scheduled, active, completed or dead', async ({ store }) => {
        const t = Date.now()
        const again = async (uniqueKey: string, id: JobId): Promise<void> => {
          assert.deepEqual(await store.enqueue({ jobs: [newJob({ uniqueKey })], now: t }), [
            { id, created: false },
          ])
        }
        const scheduled = await enqueueJob(store, t, { uniqueKey: 'scheduled', delayMs: HOUR })
        await again('scheduled', scheduled)

        const done = await enqueueJob(store, t, { uniqueKey: 'done' })
        const [claimed] = await claimAt(store, t)
        assert.equal(claimed?.id, done)
        await again('done', done)
        assert.deepEqual((await store.settle({ settlements: [completed(claimed)], now: t })).settled, ['ok'])
        await again('done', done)

        const failed = await finishNew(store, t, 'dead', { uniqueKey: 'failed' })
        await again('failed', failed)
        assert.equal((await store.listJobs()).jobs.length, 3)
      })

      test('frees a uniqueKey once its job is purged', async ({ store }) => {
        const t = Date.now()
        const old = await finishNew(store, t, 'completed', { uniqueKey: 'once' })
        assert.equal(await store.purge({ state: 'completed', now: t + SECOND }), 1)
        assert.equal(await getJob(store, old), null)
        const [fresh] = await store.enqueue({ jobs: [newJob({ uniqueKey: 'once' })], now: t + SECOND })
        assert.ok(fresh)
        assert.equal(fresh.created, true)
        assert.equal(compareIds(fresh.id, old), 1, 'a new job gets a new, higher id')
        assert.equal((await getExisting(store, fresh.id)).uniqueKey, 'once')
      })

      test('returns an empty list for an empty batch and writes nothing', async ({ store }) => {
        assert.deepEqual(await store.enqueue({ jobs: [], now: Date.now() }), [])
        assert.deepEqual(await store.listJobs(), { jobs: [], nextCursor: null })
      })
    })

    describe('claim', () => {
      test('takes queues strictly in the order given, whatever the priorities', async ({ store }) => {
        const t = Date.now()
        const [a1, b1] = await enqueueJobs(store, t, [
          { queue: 'a', priority: 0 },
          { queue: 'b', priority: 100 },
        ])
        assert.deepEqual(ids(await claimAt(store, t, { queues: ['a', 'b'], limit: 1 })), [a1])
        const a2 = await enqueueJob(store, t, { queue: 'a', priority: 100 })
        assert.deepEqual(ids(await claimAt(store, t, { queues: ['b', 'a'], limit: 1 })), [b1])
        assert.deepEqual(ids(await claimAt(store, t, { queues: ['b', 'a'], limit: 1 })), [a2])
      })

      test('fills its limit across queues in queue order', async ({ store }) => {
        const t = Date.now()
        const b = await enqueueJobs(
          store,
          t,
          Array.from({ length: 5 }, () => ({ queue: 'b', priority: 5 })),
        )
        const a = await enqueueJobs(store, t, [{ queue: 'a' }, { queue: 'a' }])
        const claimed = await claimAt(store, t, { queues: ['a', 'b'], limit: 3 })
        assert.deepEqual(ids(claimed), [a[0], a[1], b[0]])
      })

      test('takes higher priority first, then earlier runAt, then lower id within a queue', async ({
        store,
      }) => {
        const t = Date.now()
        const [j1, j2, j3, j4, j5, j6] = await enqueueJobs(store, t, [
          { priority: 0, runAt: t - 1 * SECOND },
          { priority: 5, runAt: t - 1 * SECOND },
          { priority: 0, runAt: t - 3 * SECOND },
          { priority: 0, runAt: t - 1 * SECOND },
          { priority: -5, runAt: t - 9 * SECOND },
          { priority: 5, runAt: t - 2 * SECOND },
        ])
        const order: JobId[] = []
        for (;;) {
          const claimed = await claimAt(store, t, { limit: 1 })
          if (claimed.length === 0) break
          assert.equal(claimed.length, 1)
          order.push(claimed[0]!.id)
        }
        assert.deepEqual(order, [j6, j2, j3, j1, j4, j5])
      })

      test('returns a claimed batch in claim order', async ({ store }) => {
        const t = Date.now()
        const [j1, j2, j3, j4, j5] = await enqueueJobs(store, t, [
          { queue: 'b', priority: 9 },
          { queue: 'a', priority: 0, runAt: t - SECOND },
          { queue: 'a', priority: 1 },
          { queue: 'a', priority: 0, runAt: t - 2 * SECOND },
          { queue: 'b', priority: 10 },
        ])
        const claimed = await claimAt(store, t, { queues: ['a', 'b'], limit: 10 })
        assert.deepEqual(ids(claimed), [j3, j4, j2, j5, j1])
      })

      test('takes no more jobs than its limit', async ({ store }) => {
        const t = Date.now()
        await enqueueJobs(store, t, [{}, {}, {}, {}, {}])
        assert.equal((await claimAt(store, t, { limit: 2 })).length, 2)
        assert.equal((await claimAt(store, t, { limit: 1 })).length, 1)
        assert.equal((await claimAt(store, t, { limit: 10 })).length, 2)
      })

      test('marks claimed jobs active with a counted attempt, a fresh lease token and the worker id', async ({
        store,
      }) => {
        const t = Date.now()
        const enqueued = await enqueueJobs(store, t, [{}, {}, {}])
        const claimed = await claimAt(store, t + 10, { limit: 3, leaseMs: 30 * SECOND, workerId: 'worker-a' })
        assert.deepEqual(sortIds(ids(claimed)), enqueued)
        for (const job of claimed) {
          assert.equal(job.state, 'active')
          assert.equal(job.attempts, 1)
          assert.equal(typeof job.leaseToken, 'string')
          assert.ok(job.leaseToken.length > 0, 'the lease token is not empty')
          assert.equal(job.leaseExpiresAt, t + 10 + 30 * SECOND)
          assert.equal(job.workerId, 'worker-a')
          assert.equal(job.queue, 'default')
          assert.equal(job.name, 'test-job')
          assert.deepEqual(job.payload, { n: 1 })
          assert.equal(job.maxAttempts, 25)
          const stored = await getExisting(store, job.id)
          assert.equal(stored.state, 'active')
          assert.equal(stored.attempts, 1)
          assert.equal(stored.leaseExpiresAt, t + 10 + 30 * SECOND)
          assert.equal(stored.workerId, 'worker-a')
        }
        assert.equal(new Set(claimed.map((j) => j.leaseToken)).size, 3, 'every claim has its own token')
      })

      test('draws a new lease token every time a job is claimed', async ({ store }) => {
        const t = Date.now()
        await enqueueJob(store, t)
        const first = one(await claimAt(store, t))
        const retry: Settlement = {
          kind: 'retry',
          id: first.id,
          leaseToken: first.leaseToken,
          runAt: t,
          error: { kind: 'error', message: 'again' },
        }
        assert.deepEqual((await store.settle({ settlements: [retry], now: t })).settled, ['ok'])
        const second = one(await claimAt(store, t))
        assert.equal(second.id, first.id)
        assert.equal(second.attempts, 2)
        assert.notEqual(second.leaseToken, first.leaseToken)
      })

      test('does not claim a scheduled job before its runAt', async ({ store }) => {
        const t = Date.now()
        const id = await enqueueJob(store, t, { delayMs: 10 * SECOND })
        assert.deepEqual(await claimAt(store, t + 10 * SECOND - 1), [])
        assert.equal((await getExisting(store, id)).state, 'scheduled')
        const claimed = one(await claimAt(store, t + 10 * SECOND))
        assert.equal(claimed.id, id)
        assert.equal(claimed.attempts, 1)
      })

      test('claims a due scheduled job in priority order with ready jobs', async ({ store }) => {
        const t = Date.now()
        const [ready1, ready2, scheduled] = await enqueueJobs(store, t, [
          { priority: 0 },
          { priority: 0 },
          { priority: 5, runAt: t + SECOND },
        ])
        assert.deepEqual(ids(await claimAt(store, t + 500, { limit: 1 })), [ready1])
        assert.deepEqual(ids(await claimAt(store, t + SECOND, { limit: 1 })), [scheduled])
        assert.deepEqual(ids(await claimAt(store, t + SECOND, { limit: 1 })), [ready2])
      })

      test('leaves queues that are not listed untouched', async ({ store }) => {
        const t = Date.now()
        const [a, c, b] = await enqueueJobs(store, t, [
          { queue: 'a' },
          { queue: 'c', priority: 100 },
          { queue: 'b' },
        ])
        assert.deepEqual(sortIds(ids(await claimAt(store, t, { queues: ['a', 'b'], limit: 10 }))), [a, b])
        const untouched = await getExisting(store, c!)
        assert.equal(untouched.state, 'ready')
        assert.equal(untouched.attempts, 0)
        assert.deepEqual(ids(await claimAt(store, t, { queues: ['c'] })), [c])
      })

      test('never hands out a job that is already claimed', async ({ store }) => {
        const t = Date.now()
        await enqueueJobs(store, t, [{}, {}, {}])
        assert.equal((await claimAt(store, t, { limit: 10, leaseMs: MINUTE })).length, 3)
        assert.deepEqual(await claimAt(store, t, { limit: 10, workerId: 'worker-2' }), [])
        assert.deepEqual(await claimAt(store, t + MINUTE - 1, { limit: 10, workerId: 'worker-2' }), [])
      })

      test('never gives one job to two concurrent claims from different store instances', async (h) => {
        const t = Date.now()
        const peer = await h.openPeer()
        const enqueued = await enqueueJobs(
          h.store,
          t,
          Array.from({ length: 30 }, () => ({})),
        )
        const seen: JobId[] = []
        for (let round = 0; round < 30; round++) {
          const [mine, theirs] = await Promise.all([
            claimAt(h.store, t, { limit: 4, workerId: 'worker-1' }),
            claimAt(peer, t, { limit: 4, workerId: 'worker-2' }),
          ])
          if (mine.length === 0 && theirs.length === 0) break
          seen.push(...ids(mine), ...ids(theirs))
        }
        assert.equal(new Set(seen).size, seen.length, 'no job was claimed twice')
        assert.deepEqual(sortIds(seen), enqueued, 'every job was claimed')
      })

      test('returns an empty list when no job is ready', async ({ store }) => {
        const t = Date.now()
        assert.deepEqual(await claimAt(store, t, { queues: ['default', 'other'] }), [])
        await enqueueJob(store, t, { delayMs: MINUTE })
        await enqueueJob(store, t, { queue: 'elsewhere' })
        assert.deepEqual(await claimAt(store, t, { queues: ['default', 'other'] }), [])
      })
    })

    describe('claim with names', () => {
      test('takes only jobs of the names given, in the order a claim without names takes them', async ({
        store,
      }) => {
        const t = Date.now()
        const [a1, , b1, c1, a2, , c2, b2] = await enqueueJobs(store, t, [
          { queue: 'a', name: 'resize', priority: 0 },
          { queue: 'a', name: 'unknown', priority: 9 },
          { queue: 'b', name: 'mail', priority: 1 },
          { queue: 'a', name: 'mail', priority: 0, runAt: t - SECOND },
          { queue: 'a', name: 'resize', priority: 3 },
          { queue: 'b', name: 'unknown', priority: 9 },
          { queue: 'a', name: 'mail', priority: 3, runAt: t - SECOND },
          { queue: 'b', name: 'resize', priority: 1, runAt: t - SECOND },
        ])
        const claimed = await claimAt(store, t, { queues: ['a', 'b'], names: ['resize', 'mail'], limit: 10 })
        // Queue a: priority 3 (c2 runs earlier than a2), then priority 0 (c1 earlier than a1);
        // queue b: priority 1, b2 earlier than b1.
        assert.deepEqual(ids(claimed), [c2, a2, c1, a1, b2, b1])
      })

      test('fills its limit across queues in queue order, one name at a time', async ({ store }) => {
        const t = Date.now()
        const [x1, , x2, y1] = await enqueueJobs(store, t, [
          { queue: 'a', name: 'mine' },
          { queue: 'a', name: 'theirs' },
          { queue: 'a', name: 'mine' },
          { queue: 'b', name: 'mine' },
          { queue: 'b', name: 'mine' },
        ])
        const names = ['mine']
        assert.deepEqual(ids(await claimAt(store, t, { queues: ['a', 'b'], names, limit: 3 })), [x1, x2, y1])
        assert.equal((await claimAt(store, t, { queues: ['a', 'b'], names, limit: 3 })).length, 1)
        assert.deepEqual(await claimAt(store, t, { queues: ['a', 'b'], names, limit: 3 }), [])
      })

      test('leaves jobs of other names ready, their attempts unused, for a claim that takes them', async ({
        store,
      }) => {
        const t = Date.now()
        const [other] = await enqueueJobs(store, t, [{ name: 'new-kind', priority: 5 }])
        assert.deepEqual(await claimAt(store, t, { names: ['old-kind'] }), [])
        const untouched = await getExisting(store, other!)
        assert.equal(untouched.state, 'ready')
        assert.equal(untouched.attempts, 0)
        assert.equal(untouched.lastError, null)
        const [job] = await claimAt(store, t, { names: ['old-kind', 'new-kind'] }, other)
        assert.equal(job!.attempts, 1)
      })

      test('finds its jobs behind many ready jobs of other names', async ({ store }) => {
        const t = Date.now()
        await store.enqueue({
          jobs: Array.from({ length: 500 }, () => newJob({ name: 'backlog', priority: 10 })),
          now: t,
        })
        const mine = await enqueueJob(store, t, { name: 'mine' })
        await claimAt(store, t, { names: ['mine'], limit: 1 }, mine)
        assert.deepEqual(await claimAt(store, t, { names: ['mine'] }), [])
        assert.equal((await claimAt(store, t, { limit: 1000 })).length, 500, 'the backlog is all there')
      })

      test('claims jobs of its names that come back: due, retried, snoozed, recovered, revived', async ({
        store,
      }) => {
        const t = Date.now()
        const names = ['mine']
        const [scheduled] = await enqueueJobs(store, t, [{ name: 'mine', runAt: t + SECOND }])
        await claimAt(store, t + SECOND, { names }, scheduled)
        const [retried] = await enqueueJobs(store, t, [{ name: 'mine', maxAttempts: 2 }])
        const first = one(await claimAt(store, t + SECOND, { names }))
        assert.equal(first.id, retried)
        const error: JobError = { kind: 'error', message: 'again' }
        const back: Settlement[] = [
          { kind: 'retry', id: first.id, leaseToken: first.leaseToken, runAt: t, error },
        ]
        assert.deepEqual((await store.settle({ settlements: back, now: t + SECOND })).settled, ['ok'])
        const second = one(await claimAt(store, t + SECOND, { names, leaseMs: SECOND }))
        assert.equal(second.id, retried)
        const snooze: Settlement = { kind: 'snoozed', id: second.id, leaseToken: second.leaseToken, runAt: t }
        assert.deepEqual((await store.settle({ settlements: [snooze], now: t + SECOND })).settled, ['ok'])
        const third = one(await claimAt(store, t + SECOND, { names, leaseMs: SECOND }))
        assert.equal(third.id, retried)
        // Its lease runs out: recovered, with its last attempt used up, it is dead; revived, it is back.
        assert.deepEqual(await store.recoverExpired({ now: t + 3 * SECOND }), {
          retried: [],
          dead: [retried],
          clamped: 0,
        })
        assert.equal(await store.retry({ ids: [retried!], now: t + 3 * SECOND }), 1)
        const fourth = one(await claimAt(store, t + 3 * SECOND, { names, leaseMs: SECOND }))
        assert.equal(fourth.id, retried)
        assert.deepEqual(await store.recoverExpired({ now: t + 5 * SECOND }), {
          retried: [retried],
          dead: [],
          clamped: 0,
        })
        await claimAt(store, t + 5 * SECOND, { names }, retried)
      })

      test('does not hand out a cancelled job, nor one another claim took without names', async ({
        store,
      }) => {
        const t = Date.now()
        const [cancelled, taken, left] = await enqueueJobs(store, t, [
          { name: 'mine', priority: 2 },
          { name: 'mine', priority: 1 },
          { name: 'mine' },
        ])
        assert.equal(await store.cancel({ ids: [cancelled!], now: t }), 1)
        await claimAt(store, t, { limit: 1 }, taken)
        await claimAt(store, t, { names: ['mine'] }, left)
        assert.deepEqual(await claimAt(store, t, { names: ['mine'] }), [])
        assert.deepEqual(await claimAt(store, t), [])
      })

      test('settleAndClaim claims only the names given', async ({ store }) => {
        const t = Date.now()
        const [first, , third] = await enqueueJobs(store, t, [
          { name: 'mine' },
          { name: 'theirs' },
          { name: 'mine' },
        ])
        const [job] = await claimAt(store, t, { names: ['mine'], limit: 1 }, first)
        const { settled, claimed } = await store.settle({
          settlements: [completed(job)],
          claim: { queues: ['default'], names: ['mine'], limit: 5, leaseMs: LEASE_MS, workerId: 'worker-1' },
          now: t + 1,
        })
        assert.deepEqual(settled, ['ok'])
        assert.deepEqual(ids(claimed), [third])
      })

      test('rejects an empty names list, a repeated name and a malformed one, naming the field', async ({
        store,
      }) => {
        const t = Date.now()
        const id = await enqueueJob(store, t, { name: 'mine' })
        for (const [names, field] of [
          [[], 'names'],
          [['mine', 'mine'], 'names[1]'],
          [['mine', 'no spaces'], 'names[1]'],
        ] as const) {
          await assert.rejects(
            claimAt(store, t, { names }),
            (error: unknown) =>
              error instanceof ValidationError && error.code === 'invalid_name' && error.field === field,
            `names ${JSON.stringify(names)}`,
          )
        }
        assert.equal((await getExisting(store, id)).state, 'ready', 'nothing was claimed')
      })

      test('a wait for some names is not woken by ready jobs of other names, and is by its own', async (h) => {
        const peer = await h.openPeer()
        await enqueueJob(h.store, Date.now(), { name: 'theirs' })
        const names = ['mine']
        assert.equal(
          await within(
            5 * SECOND,
            'waitForWork',
            waitReason(h.store, { queues: ['default'], names, timeoutMs: 300 }),
          ),
          'timeout',
        )
        const waiting = waitReason(h.store, { queues: ['default'], names, timeoutMs: 10 * SECOND })
        await new Promise((resolve) => setTimeout(resolve, 100))
        await enqueueJob(peer, Date.now(), { name: 'mine' })
        assert.equal(await within(5 * SECOND, 'waitForWork', waiting), 'notified')
      })
    })

    describe('settle', () => {
      test('completes a job, storing its result and finish time and ending its lease', async ({ store }) => {
        const t = Date.now()
        await enqueueJob(store, t)
        const job = one(await claimAt(store, t + 1))
        const result = { ok: true, items: [1, 2, { three: null }] }
        assert.deepEqual(
          (await store.settle({ settlements: [completed(job, result)], now: t + 2 })).settled,
          ['ok'],
        )
        const stored = await getExisting(store, job.id)
        assert.equal(stored.state, 'completed')
        assert.deepEqual(stored.result, result)
        assert.equal(stored.finishedAt, t + 2)
        assert.equal(stored.updatedAt, t + 2)
        assert.equal(stored.attempts, 1)
        assert.equal(stored.leaseExpiresAt, null)
        assert.equal(
          (stored as unknown as Record<string, unknown>).leaseToken ?? null,
          null,
          'no lease token is left on it',
        )
        assert.deepEqual(await renewAt(store, t + 3, job), ['lease_lost'])
        assert.deepEqual(await claimAt(store, t + HOUR), [])
      })

      test('puts a retried job back as scheduled at its runAt with its error stored', async ({ store }) => {
        const t = Date.now()
        await enqueueJob(store, t)
        const job = one(await claimAt(store, t))
        const error: JobError = {
          kind: 'error',
          message: 'boom',
          name: 'TypeError',
          stack: 'TypeError: boom\n    at handler (jobs.ts:1:1)',
        }
        const retry: Settlement = {
          kind: 'retry',
          id: job.id,
          leaseToken: job.leaseToken,
          runAt: t + MINUTE,
          error,
        }
        assert.deepEqual((await store.settle({ settlements: [retry], now: t + 1 })).settled, ['ok'])
        const stored = await getExisting(store, job.id)
        assert.equal(stored.state, 'scheduled')
        assert.equal(stored.runAt, t + MINUTE)
        assert.deepEqual(stored.lastError, error)
        assert.equal(stored.attempts, 1)
        assert.equal(stored.finishedAt, null)
        assert.equal(stored.leaseExpiresAt, null)
        assert.deepEqual(await claimAt(store, t + MINUTE - 1), [])
        const again = one(await claimAt(store, t + MINUTE))
        assert.equal(again.id, job.id)
        assert.equal(again.attempts, 2)
      })

      test('makes a retried job ready at once when its runAt is not in the future', async ({ store }) => {
        const t = Date.now()
        await enqueueJob(store, t)
        const job = one(await claimAt(store, t))
        const retry: Settlement = {
          kind: 'retry',
          id: job.id,
          leaseToken: job.leaseToken,
          runAt: t + 5,
          error: { kind: 'timeout', message: 'took too long', timeoutMs: 100 },
        }
        assert.deepEqual((await store.settle({ settlements: [retry], now: t + 5 })).settled, ['ok'])
        const stored = await getExisting(store, job.id)
        assert.equal(stored.state, 'ready')
        assert.deepEqual(stored.lastError, { kind: 'timeout', message: 'took too long', timeoutMs: 100 })
        assert.deepEqual(ids(await claimAt(store, t + 5)), [job.id])
      })

      test('ends a job as dead with its error and finish time', async ({ store }) => {
        const t = Date.now()
        await enqueueJob(store, t)
        const job = one(await claimAt(store, t))
        const error: JobError = {
          kind: 'crash',
          message: 'the process running the job died',
          exitCode: null,
          signal: 'SIGKILL',
          stderrTail: 'FATAL ERROR: Reached heap limit',
        }
        const dead: Settlement = { kind: 'dead', id: job.id, leaseToken: job.leaseToken, error }
        assert.deepEqual((await store.settle({ settlements: [dead], now: t + 7 })).settled, ['ok'])
        const stored = await getExisting(store, job.id)
        assert.equal(stored.state, 'dead')
        assert.deepEqual(stored.lastError, error)
        assert.equal(stored.finishedAt, t + 7)
        assert.equal(stored.attempts, 1)
        assert.equal(stored.leaseExpiresAt, null)
        assert.deepEqual(await claimAt(store, t + HOUR), [])
      })

      test('snoozes a job to its runAt without counting the attempt', async ({ store }) => {
        const t = Date.now()
        const id = await enqueueJob(store, t)
        const first = one(await claimAt(store, t))
        const snooze = (job: ClaimedJob, runAt: number): Settlement => ({
          kind: 'snoozed',
          id: job.id,
          leaseToken: job.leaseToken,
          runAt,
        })
        assert.deepEqual((await store.settle({ settlements: [snooze(first, t + MINUTE)], now: t })).settled, [
          'ok',
        ])
        let stored = await getExisting(store, id)
        assert.equal(stored.state, 'scheduled')
        assert.equal(stored.runAt, t + MINUTE)
        assert.equal(stored.attempts, 0, 'back to the attempts before the claim')
        assert.deepEqual(await claimAt(store, t + MINUTE - 1), [])

        // A retry counts its attempt; a snooze after it still takes back only its own.
        const second = one(await claimAt(store, t + MINUTE))
        assert.equal(second.attempts, 1)
        const retry: Settlement = {
          kind: 'retry',
          id,
          leaseToken: second.leaseToken,
          runAt: t + MINUTE,
          error: { kind: 'error', message: 'first failure' },
        }
        assert.deepEqual((await store.settle({ settlements: [retry], now: t + MINUTE })).settled, ['ok'])
        const third = one(await claimAt(store, t + MINUTE))
        assert.equal(third.attempts, 2)
        assert.deepEqual(
          (await store.settle({ settlements: [snooze(third, t + 2 * MINUTE)], now: t + MINUTE })).settled,
          ['ok'],
        )
        stored = await getExisting(store, id)
        assert.equal(stored.state, 'scheduled')
        assert.equal(stored.runAt, t + 2 * MINUTE)
        assert.equal(stored.attempts, 1)
      })

      test('returns per-item results in input order for a batch of kept and lost leases', async ({
        store,
      }) => {
        const t = Date.now()
        const enqueued = await enqueueJobs(store, t, [{}, {}, {}, {}])
        const claimed = await claimAt(store, t, { limit: 4 })
        const byId = new Map(claimed.map((j) => [j.id, j]))
        const [j1, j2, j3, j4] = enqueued.map((id) => byId.get(id)!)
        const before = view(await getExisting(store, j1!.id))
        const error: JobError = { kind: 'permanent', message: 'gave up' }
        const results = (
          await store.settle({
            settlements: [
              completed(j4, 'four'),
              { kind: 'retry', id: j1!.id, leaseToken: 'not-the-token', runAt: t + MINUTE, error },
              { kind: 'dead', id: j2!.id, leaseToken: j2!.leaseToken, error },
              { kind: 'snoozed', id: j3!.id, leaseToken: j3!.leaseToken, runAt: t + MINUTE },
              { kind: 'completed', id: UNKNOWN_ID, leaseToken: j1!.leaseToken },
            ],
            now: t + 1,
          })
        ).settled
        assert.deepEqual(results, ['ok', 'lease_lost', 'ok', 'ok', 'lease_lost'])
        assert.equal((await getExisting(store, j4!.id)).state, 'completed')
        assert.deepEqual(view(await getExisting(store, j1!.id)), before, 'the lost item changed nothing')
        assert.equal((await getExisting(store, j2!.id)).state, 'dead')
        assert.equal((await getExisting(store, j3!.id)).state, 'scheduled')
        assert.equal(await getJob(store, UNKNOWN_ID), null)
      })

      test("returns 'lease_lost' for a wrong lease token and leaves the job unchanged", async ({ store }) => {
        const t = Date.now()
        await enqueueJob(store, t)
        const job = one(await claimAt(store, t))
        const before = view(await getExisting(store, job.id))
        const error: JobError = { kind: 'error', message: 'no' }
        const results = (
          await store.settle({
            settlements: [
              { kind: 'completed', id: job.id, leaseToken: 'not-the-token', result: 1 },
              { kind: 'retry', id: job.id, leaseToken: 'not-the-token', runAt: t, error },
              { kind: 'dead', id: job.id, leaseToken: '', error },
              { kind: 'snoozed', id: job.id, leaseToken: job.leaseToken + 'x', runAt: t },
            ],
            now: t + 1,
          })
        ).settled
        assert.deepEqual(results, ['lease_lost', 'lease_lost', 'lease_lost', 'lease_lost'])
        assert.deepEqual(view(await getExisting(store, job.id)), before)
        assert.deepEqual((await store.settle({ settlements: [completed(job)], now: t + 2 })).settled, ['ok'])
      })

      test("returns 'lease_lost' when a job is settled a second time", async ({ store }) => {
        const t = Date.now()
        await enqueueJob(store, t)
        const job = one(await claimAt(store, t))
        assert.deepEqual(
          (await store.settle({ settlements: [completed(job, 'first')], now: t + 1 })).settled,
          ['ok'],
        )
        const after = view(await getExisting(store, job.id))
        const results = (
          await store.settle({
            settlements: [
              completed(job, 'second'),
              {
                kind: 'dead',
                id: job.id,
                leaseToken: job.leaseToken,
                error: { kind: 'error', message: 'late' },
              },
              { kind: 'snoozed', id: job.id, leaseToken: job.leaseToken, runAt: t },
            ],
            now: t + 2,
          })
        ).settled
        assert.deepEqual(results, ['lease_lost', 'lease_lost', 'lease_lost'])
        assert.deepEqual(view(await getExisting(store, job.id)), after)
        assert.equal((await getExisting(store, job.id)).result, 'first')
      })

      test("returns 'lease_lost' to a worker whose expired job was recovered and claimed by another", async ({
        store,
      }) => {
        const t = Date.now()
        await enqueueJob(store, t)
        const stale = one(await claimAt(store, t, { leaseMs: SECOND, workerId: 'worker-old' }))
        const recovered = await store.recoverExpired({ now: t + 5 * SECOND })
        assert.deepEqual(recovered, { retried: [stale.id], dead: [], clamped: 0 })
        const owner = one(await claimAt(store, t + 5 * SECOND, { workerId: 'worker-new' }))
        assert.equal(owner.id, stale.id)
        assert.notEqual(owner.leaseToken, stale.leaseToken)

        assert.deepEqual(await renewAt(store, t + 6 * SECOND, stale), ['lease_lost'])
        assert.deepEqual(
          (await store.settle({ settlements: [completed(stale, 'stale')], now: t + 6 * SECOND })).settled,
          ['lease_lost'],
        )
        let stored = await getExisting(store, owner.id)
        assert.equal(stored.state, 'active', "the stale settle did not touch the new owner's job")
        assert.equal(stored.workerId, 'worker-new')

        assert.deepEqual(
          (await store.settle({ settlements: [completed(owner, 'owner')], now: t + 7 * SECOND })).settled,
          ['ok'],
        )
        stored = await getExisting(store, owner.id)
        assert.equal(stored.state, 'completed')
        assert.equal(stored.result, 'owner')
        assert.equal(stored.attempts, 2)
      })

      test('returns an empty list for an empty settle batch', async ({ store }) => {
        assert.deepEqual((await store.settle({ settlements: [], now: Date.now() })).settled, [])
      })
    })

    describe('settle with a claim', () => {
      test('settles, then claims the next jobs, in one call', async ({ store }) => {
        const t = Date.now()
        const [first, second, third] = await enqueueJobs(store, t, [{}, {}, {}])
        const [job] = await claimAt(store, t, { limit: 1 }, first)
        const { settled, claimed } = await store.settle({
          settlements: [completed(job)],
          claim: { queues: ['default'], limit: 5, leaseMs: LEASE_MS, workerId: 'worker-1' },
          now: t + 1,
        })
        assert.deepEqual(settled, ['ok'])
        assert.deepEqual(ids(claimed), [second, third])
        for (const next of claimed) {
          assert.equal(next.state, 'active')
          assert.equal(next.leaseExpiresAt, t + 1 + LEASE_MS)
        }
        assert.equal((await getJob(store, first!))?.state, 'completed')
      })

      test('applies the settlements first, so a retry due now can be claimed by the same call', async ({
        store,
      }) => {
        const t = Date.now()
        const [only] = await enqueueJobs(store, t, [{}])
        const [job] = await claimAt(store, t, { limit: 1 }, only)
        const { settled, claimed } = await store.settle({
          settlements: [
            {
              kind: 'retry',
              id: job!.id,
              leaseToken: job!.leaseToken,
              runAt: t,
              error: { kind: 'error', message: 'x' },
            },
          ],
          claim: { queues: ['default'], limit: 1, leaseMs: LEASE_MS, workerId: 'worker-1' },
          now: t,
        })
        assert.deepEqual(settled, ['ok'])
        assert.deepEqual(ids(claimed), [only])
        assert.equal(claimed[0]!.attempts, 2)
        assert.notEqual(claimed[0]!.leaseToken, job!.leaseToken)
      })

      test("reports 'lease_lost' for a stale settlement and still claims", async ({ store }) => {
        const t = Date.now()
        const [first, second] = await enqueueJobs(store, t, [{}, {}])
        const [job] = await claimAt(store, t, { limit: 1 }, first)
        const { settled, claimed } = await store.settle({
          settlements: [{ ...completed(job), leaseToken: 'not-the-token' }],
          claim: { queues: ['default'], limit: 1, leaseMs: LEASE_MS, workerId: 'worker-1' },
          now: t,
        })
        assert.deepEqual(settled, ['lease_lost'])
        assert.deepEqual(ids(claimed), [second])
        assert.equal((await getJob(store, first!))?.state, 'active')
      })

      test('claims nothing and settles nothing when its claim parameters are bad', async ({ store }) => {
        const t = Date.now()
        const [first] = await enqueueJobs(store, t, [{}, {}])
        const [job] = await claimAt(store, t, { limit: 1 }, first)
        await assert.rejects(
          store.settle({
            settlements: [completed(job)],
            claim: { queues: [], limit: 1, leaseMs: LEASE_MS, workerId: 'worker-1' },
            now: t,
          }),
          (error: unknown) => error instanceof FerryError,
        )
        assert.equal((await getJob(store, first!))?.state, 'active')
      })
    })

    describe('renew', () => {
      test('extends the lease to now plus leaseMs', async ({ store }) => {
        const t = Date.now()
        await enqueueJob(store, t)
        const job = one(await claimAt(store, t, { leaseMs: 10 * SECOND }))
        const results = await store.renew({
          leases: [{ id: job.id, leaseToken: job.leaseToken }],
          leaseMs: 20 * SECOND,
          now: t + 5 * SECOND,
        })
        assert.deepEqual(results, ['ok'])
        const stored = await getExisting(store, job.id)
        assert.equal(stored.leaseExpiresAt, t + 25 * SECOND)
        assert.equal(stored.state, 'active')
        assert.equal(stored.attempts, 1)
        assert.equal(stored.workerId, job.workerId)
        assert.deepEqual(
          (await store.settle({ settlements: [completed(job)], now: t + 6 * SECOND })).settled,
          ['ok'],
        )
      })

      test("returns 'lease_lost' for a stale token and leaves that lease as it was", async ({ store }) => {
        const t = Date.now()
        await enqueueJobs(store, t, [{}, {}])
        const [kept, other] = await claimAt(store, t, { limit: 2, leaseMs: 10 * SECOND })
        const results = await store.renew({
          leases: [
            { id: kept!.id, leaseToken: kept!.leaseToken },
            { id: other!.id, leaseToken: 'not-the-token' },
            { id: UNKNOWN_ID, leaseToken: kept!.leaseToken },
          ],
          leaseMs: MINUTE,
          now: t + SECOND,
        })
        assert.deepEqual(results, ['ok', 'lease_lost', 'lease_lost'])
        assert.equal((await getExisting(store, kept!.id)).leaseExpiresAt, t + SECOND + MINUTE)
        assert.equal((await getExisting(store, other!.id)).leaseExpiresAt, t + 10 * SECOND)
      })

      test('keeps a renewed job from being recovered', async ({ store }) => {
        const t = Date.now()
        await enqueueJob(store, t)
        const job = one(await claimAt(store, t, { leaseMs: SECOND }))
        assert.deepEqual(await renewAt(store, t + 900, job, SECOND), ['ok'])
        assert.deepEqual(await store.recoverExpired({ now: t + 1500 }), { retried: [], dead: [], clamped: 0 })
        assert.equal((await getExisting(store, job.id)).state, 'active')
        assert.deepEqual(await store.recoverExpired({ now: t + 1900 }), {
          retried: [job.id],
          dead: [],
          clamped: 0,
        })
      })

      test('returns an empty list for an empty renew batch', async ({ store }) => {
        assert.deepEqual(await store.renew({ leases: [], leaseMs: MINUTE, now: Date.now() }), [])
      })
    })

    describe('recoverExpired', () => {
      test('puts jobs whose lease ran out back to ready with the attempt counted', async ({ store }) => {
        const t = Date.now()
        const enqueued = await enqueueJobs(store, t, [{}, {}])
        await claimAt(store, t, { limit: 2, leaseMs: SECOND })
        const recovered = await store.recoverExpired({ now: t + SECOND })
        assert.deepEqual(sortIds(recovered.retried), enqueued, 'a lease that expires at now has run out')
        assert.deepEqual(recovered.dead, [])
        for (const id of enqueued) {
          const job = await getExisting(store, id)
          assert.equal(job.state, 'ready')
          assert.equal(job.attempts, 1)
          assert.equal(job.lastError?.kind, 'lease_expired')
          assert.equal(typeof job.lastError?.message, 'string')
          assert.equal(job.leaseExpiresAt, null)
          assert.equal(job.finishedAt, null)
        }
        const again = await claimAt(store, t + SECOND, { limit: 2 })
        assert.deepEqual(sortIds(ids(again)), enqueued)
        for (const job of again) assert.equal(job.attempts, 2)
      })

      test('ends an expired job as dead when it has no attempts left', async ({ store }) => {
        const t = Date.now()
        const [once, twice] = await enqueueJobs(store, t, [{ maxAttempts: 1 }, { maxAttempts: 2 }])
        await claimAt(store, t, { limit: 2, leaseMs: SECOND })
        assert.deepEqual(await store.recoverExpired({ now: t + 2 * SECOND }), {
          retried: [twice],
          dead: [once],
          clamped: 0,
        })
        const dead = await getExisting(store, once!)
        assert.equal(dead.state, 'dead')
        assert.equal(dead.attempts, 1)
        assert.equal(dead.lastError?.kind, 'lease_expired')
        assert.equal(dead.finishedAt, t + 2 * SECOND)

        assert.deepEqual(ids(await claimAt(store, t + 2 * SECOND, { leaseMs: SECOND })), [twice])
        assert.deepEqual(await store.recoverExpired({ now: t + 4 * SECOND }), {
          retried: [],
          dead: [twice],
          clamped: 0,
        })
        const last = await getExisting(store, twice!)
        assert.equal(last.state, 'dead')
        assert.equal(last.attempts, 2)
        assert.equal(last.lastError?.kind, 'lease_expired')
      })

      test('leaves jobs whose lease has not run out alone', async ({ store }) => {
        const t = Date.now()
        const [short, long] = await enqueueJobs(store, t, [{ priority: 1 }, { priority: 0 }])
        const [s] = await claimAt(store, t, { limit: 1, leaseMs: SECOND })
        const [l] = await claimAt(store, t, { limit: 1, leaseMs: 10 * SECOND })
        assert.deepEqual([s?.id, l?.id], [short, long])
        const before = view(await getExisting(store, long!))
        assert.deepEqual(await store.recoverExpired({ now: t + 10 * SECOND - 1 }), {
          retried: [short],
          dead: [],
          clamped: 0,
        })
        assert.deepEqual(view(await getExisting(store, long!)), before)
        assert.deepEqual(
          (await store.settle({ settlements: [completed(l)], now: t + 10 * SECOND - 1 })).settled,
          ['ok'],
        )
      })

      test('recovers nothing when called again', async ({ store }) => {
        const t = Date.now()
        const id = await enqueueJob(store, t)
        await claimAt(store, t, { leaseMs: SECOND })
        assert.deepEqual(await store.recoverExpired({ now: t + MINUTE }), {
          retried: [id],
          dead: [],
          clamped: 0,
        })
        const after = view(await getExisting(store, id))
        assert.deepEqual(await store.recoverExpired({ now: t + MINUTE }), {
          retried: [],
          dead: [],
          clamped: 0,
        })
        assert.deepEqual(await store.recoverExpired({ now: t + HOUR }), { retried: [], dead: [], clamped: 0 })
        assert.deepEqual(view(await getExisting(store, id)), after)
      })

      test('rejects the old lease token once the job is recovered', async ({ store }) => {
        const t = Date.now()
        await enqueueJob(store, t)
        const job = one(await claimAt(store, t, { leaseMs: SECOND }))
        await store.recoverExpired({ now: t + MINUTE })
        assert.deepEqual(await renewAt(store, t + MINUTE, job), ['lease_lost'])
        assert.deepEqual((await store.settle({ settlements: [completed(job)], now: t + MINUTE })).settled, [
          'lease_lost',
        ])
        const stored = await getExisting(store, job.id)
        assert.equal(stored.state, 'ready')
        assert.equal(stored.result ?? null, null)
      })

      test('recovers at most limit jobs per call', async ({ store }) => {
        const t = Date.now()
        const enqueued = await enqueueJobs(store, t, [{}, {}, {}])
        await claimAt(store, t, { limit: 3, leaseMs: SECOND })
        const first = await store.recoverExpired({ now: t + MINUTE, limit: 2 })
        assert.equal(first.retried.length + first.dead.length, 2)
        const second = await store.recoverExpired({ now: t + MINUTE, limit: 2 })
        assert.equal(second.retried.length + second.dead.length, 1)
        assert.deepEqual(sortIds([...first.retried, ...second.retried]), enqueued)
        assert.deepEqual(await store.recoverExpired({ now: t + MINUTE, limit: 2 }), {
          retried: [],
          dead: [],
          clamped: 0,
        })
      })

      test('recovers only the leases given, each if still as seen and run out', async ({ store }) => {
        const t = Date.now()
        const [renewed, reclaimed, live, taken] = await enqueueJobs(store, t, [{}, {}, {}, {}])
        const jobs = await claimAt(store, t, { limit: 4, leaseMs: SECOND })
        const seen = jobs.map(({ id, leaseToken, leaseExpiresAt }) => ({ id, leaseToken, leaseExpiresAt }))
        const byId = new Map(jobs.map((job) => [job.id, job]))
        // Since they were seen: one renewed, one recovered and claimed again; one not expired yet.
        assert.deepEqual(await renewAt(store, t + 500, byId.get(renewed!)!, SECOND), ['ok'])
        assert.deepEqual(await store.recoverExpired({ now: t + SECOND, leases: [seen[1]!] }), {
          retried: [reclaimed],
          dead: [],
          clamped: 0,
        })
        await claimAt(store, t + SECOND, { leaseMs: SECOND }, reclaimed)
        const notYet = { ...seen[2]!, leaseExpiresAt: seen[2]!.leaseExpiresAt }
        assert.deepEqual(await store.recoverExpired({ now: t + SECOND - 1, leases: [notYet] }), {
          retried: [],
          dead: [],
          clamped: 0,
        })
        assert.deepEqual(
          await store.recoverExpired({ now: t + 2 * SECOND, leases: [seen[0]!, seen[1]!, seen[3]!] }),
          { retried: [taken], dead: [], clamped: 0 },
          'only the one still as seen',
        )
        assert.equal((await getExisting(store, live!)).state, 'active')
        assert.equal((await getExisting(store, renewed!)).state, 'active')
        assert.deepEqual(await store.recoverExpired({ now: t + 2 * SECOND, leases: [] }), {
          retried: [],
          dead: [],
          clamped: 0,
        })
      })

      test('recovers nothing when no job is active', async ({ store }) => {
        const t = Date.now()
        assert.deepEqual(await store.recoverExpired({ now: t }), { retried: [], dead: [], clamped: 0 })
        await enqueueJobs(store, t, [{}, { delayMs: SECOND }])
        await finishNew(store, t, 'completed', { queue: 'done' })
        assert.deepEqual(await store.recoverExpired({ now: t + HOUR }), { retried: [], dead: [], clamped: 0 })
      })
    })

    describe('findExpiredLeases', () => {
      test('lists active jobs whose lease ran out, oldest expiry first, with the store clock and each lease', async ({
        store,
      }) => {
        const t = Date.now()
        const [first, second, live] = await enqueueJobs(store, t, [{ priority: 2 }, { priority: 1 }, {}])
        const [a] = await claimAt(store, t, { limit: 1, leaseMs: 2 * SECOND })
        const [b] = await claimAt(store, t + 100, { limit: 1, leaseMs: SECOND })
        await claimAt(store, t, { limit: 1, leaseMs: HOUR }, live)
        assert.deepEqual(await store.findExpiredLeases({ now: t + 2 * SECOND }), {
          now: t + 2 * SECOND,
          nextExpiresAt: t + HOUR,
          leases: [
            { id: second, leaseToken: b!.leaseToken, leaseExpiresAt: t + 100 + SECOND, leaseMs: SECOND },
            { id: first, leaseToken: a!.leaseToken, leaseExpiresAt: t + 2 * SECOND, leaseMs: 2 * SECOND },
          ],
        })
        assert.deepEqual((await store.findExpiredLeases({ now: t + 2 * SECOND, limit: 1 })).leases.length, 1)
        // A renewal sets the length it was asked for.
        assert.deepEqual(await renewAt(store, t + 2 * SECOND, a!, 3 * SECOND), ['ok'])
        const later = await store.findExpiredLeases({ now: t + 10 * SECOND })
        assert.deepEqual(
          later.leases.map(({ id, leaseMs }) => ({ id, leaseMs })),
          [
            { id: second, leaseMs: SECOND },
            { id: first, leaseMs: 3 * SECOND },
          ],
        )
        // Read only: nothing was recovered.
        assert.equal((await getExisting(store, first!)).state, 'active')
      })

      test("reads the store's own clock when no now is given", async ({ store }) => {
        const before = Date.now()
        const { now, leases, nextExpiresAt } = await store.findExpiredLeases()
        // Server stores read their server's clock: allow for a small difference from this host's.
        assert.ok(Math.abs(now - before) < 5 * SECOND, `now ${now} is near ${before}`)
        assert.deepEqual(leases, [])
        assert.equal(nextExpiresAt, null)
      })
    })

    describe('recoverExpired with clampLeases', () => {
      test('brings leases renewed in the future (the clock went back) to their own length from now', async ({
        store,
      }) => {
        const t = Date.now()
        const [stale, fresh] = await enqueueJobs(store, t, [{ priority: 1 }, {}])
        await claimAt(store, t, { limit: 1, leaseMs: 10 * SECOND }, stale)
        const back = t - HOUR
        await claimAt(store, back, { limit: 1, leaseMs: 20 * SECOND }, fresh)
        const freshBefore = view(await getExisting(store, fresh!))
        assert.equal(await clampLeases(store, { now: back + SECOND }), 1)
        assert.equal((await getExisting(store, stale!)).leaseExpiresAt, back + SECOND + 10 * SECOND)
        assert.deepEqual(
          view(await getExisting(store, fresh!)),
          freshBefore,
          'a lease set before now is kept',
        )
        assert.equal(await clampLeases(store, { now: back + SECOND }), 0)
        assert.deepEqual(await store.recoverExpired({ now: back + 11 * SECOND }), {
          retried: [stale],
          dead: [],
          clamped: 0,
        })
      })

      test('clamps first, then recovers what ran out, in the same call', async ({ store }) => {
        const t = Date.now()
        const [ahead, expired] = await enqueueJobs(store, t, [{ priority: 1 }, {}])
        await claimAt(store, t, { limit: 1, leaseMs: 10 * SECOND }, ahead)
        const back = t - HOUR
        await claimAt(store, back, { limit: 1, leaseMs: SECOND }, expired)
        assert.deepEqual(await store.recoverExpired({ now: back + 2 * SECOND, clampLeases: true }), {
          retried: [expired],
          dead: [],
          clamped: 1,
        })
        assert.equal((await getExisting(store, ahead!)).leaseExpiresAt, back + 2 * SECOND + 10 * SECOND)
      })
    })

    describe('waitForWork', () => {
      test("resolves 'notified' when a job is enqueued through the same store", async ({ store }) => {
        const waiting = waitReason(store, { queues: ['default'], timeoutMs: 2 * SECOND })
        await store.enqueue({ jobs: [newJob()] })
        assert.equal(await within(3 * SECOND, 'waitForWork', waiting), 'notified')
      })

      test("resolves 'notified' when another store instance enqueues a job", async (h) => {
        const peer = await h.openPeer()
        const waiting = waitReason(h.store, { queues: ['default'], timeoutMs: 2 * SECOND })
        await peer.enqueue({ jobs: [newJob()] })
        assert.equal(await within(3 * SECOND, 'waitForWork', waiting), 'notified')
      })

      test('wakes a waiting worker to claim a job another store instance enqueued within 2 s', async (h) => {
        const peer = await h.openPeer()
        assert.deepEqual(
          await h.store.claim({ queues: ['default'], limit: 1, leaseMs: LEASE_MS, workerId: 'w' }),
          [],
        )
        const deadline = Date.now() + 2 * SECOND
        const waiting = waitReason(h.store, { queues: ['default'], timeoutMs: 2 * SECOND })
        const [enqueued] = await peer.enqueue({ jobs: [newJob()] })
        // A worker's loop: wait, claim; an empty claim after a wake-up means wait again.
        let reason = await waiting
        for (;;) {
          assert.notEqual(reason, 'timeout', 'the worker was not woken in time')
          const claimed = await h.store.claim({
            queues: ['default'],
            limit: 1,
            leaseMs: LEASE_MS,
            workerId: 'w',
          })
          if (claimed.length > 0) {
            assert.deepEqual(ids(claimed), [enqueued!.id])
            break
          }
          const left = deadline - Date.now()
          assert.ok(left > 0, 'the job was not claimable within 2 s')
          reason = await waitReason(h.store, { queues: ['default'], timeoutMs: left })
        }
      })

      test("resolves 'due' when a scheduled job's runAt arrives", async ({ store }) => {
        const [result] = await store.enqueue({ jobs: [newJob({ delayMs: 150 })] })
        const { runAt } = await getExisting(store, result!.id)
        const reason = await within(
          5 * SECOND,
          'waitForWork',
          waitReason(store, { queues: ['default'], timeoutMs: 3 * SECOND }),
        )
        assert.equal(reason, 'due')
        const now = Date.now()
        assert.ok(now >= runAt - 5, `woke ${runAt - now} ms before the job's runAt`)
        assert.ok(now < runAt + 2 * SECOND, `woke ${now - runAt} ms after the job's runAt`)
      })

      test("resolves 'aborted' when its signal is aborted", async ({ store }) => {
        const controller = new AbortController()
        const waiting = waitReason(store, {
          queues: ['default'],
          signal: controller.signal,
          timeoutMs: 5 * SECOND,
        })
        controller.abort()
        assert.equal(await within(SECOND, 'waitForWork', waiting), 'aborted')
        const already = waitReason(store, {
          queues: ['default'],
          signal: AbortSignal.abort(),
          timeoutMs: 5 * SECOND,
        })
        assert.equal(await within(SECOND, 'waitForWork', already), 'aborted')
      })

      test("resolves 'timeout' after timeoutMs", async ({ store }) => {
        const started = Date.now()
        const reason = await within(
          2 * SECOND,
          'waitForWork',
          waitReason(store, { queues: ['default'], timeoutMs: 50 }),
        )
        assert.equal(reason, 'timeout')
        assert.ok(Date.now() - started >= 45, 'it waited about timeoutMs')
      })

      test("resolves 'aborted' for a waiter when the store is closed", async ({ store }) => {
        const waiting = waitReason(store, { queues: ['default'], timeoutMs: 5 * SECOND })
        await store.close()
        assert.equal(await within(SECOND, 'waitForWork', waiting), 'aborted')
      })
    })

    describe('waitForWork with a claim', () => {
      deliveryTest(
        'an enqueue from another store instance hands a waiter its jobs, leased, in claim order',
        async (h, waitForJobs) => {
          const peer = await h.openPeer()
          const claim = { limit: 2, leaseMs: LEASE_MS, workerId: 'waiter-1' }
          // The waiter registers while its wait starts: an enqueue that comes first only wakes it.
          // Retry until a wait was registered in time (the first, unless the machine is very busy).
          for (let attempt = 1; ; attempt++) {
            const waiting = waitForJobs({ queues: ['high', 'default'], timeoutMs: 5 * SECOND, claim })
            await new Promise((resolve) => setTimeout(resolve, 100 * attempt))
            const before = Date.now()
            const [low, high, urgent] = await enqueueJobs(peer, before, [
              { queue: 'default' },
              { queue: 'high' },
              { queue: 'default', priority: 5 },
            ])
            const wake = await within(6 * SECOND, 'waitForJobs', waiting)
            if (wake.reason !== 'delivered') {
              assert.equal(wake.reason, 'notified', 'the enqueue woke the waiter')
              assert.deepEqual(wake.jobs, [])
              assert.ok(attempt < 5, 'no wait was registered in time in 5 attempts')
              await claimAt(h.store, before, { queues: ['high', 'default'] })
              continue
            }
            assert.deepEqual(ids(wake.jobs), [high, urgent], 'queue order, then priority')
            for (const job of wake.jobs) {
              assert.equal(job.state, 'active')
              assert.equal(job.attempts, 1, 'the delivery counts the attempt, as a claim does')
              assert.equal(job.workerId, 'waiter-1')
              assert.equal(
                job.leaseExpiresAt,
                before + DELIVERY_LEASE_MS,
                'a delivery lease from the enqueue',
              )
              assert.deepEqual(view(await getExisting(h.store, job.id)), view(job), 'as the store has it')
            }
            // Taken (fenced by the token like a claim's lease), they get the waiter's own lease.
            const [first, second] = wake.jobs
            const take = (jobs: readonly ClaimedJob[]) =>
              h.store.renew({
                delivered: true,
                leases: jobs.map((job) => ({ id: job.id, leaseToken: job.leaseToken })),
                leaseMs: LEASE_MS,
                now: before + 1,
              })
            assert.deepEqual(await take([{ ...first!, leaseToken: 'forged' }, second!]), ['lease_lost', 'ok'])
            assert.deepEqual(await take([first!]), ['ok'])
            for (const job of wake.jobs) {
              assert.equal((await getExisting(h.store, job.id)).leaseExpiresAt, before + 1 + LEASE_MS)
            }
            assert.deepEqual(await h.store.recoverExpired({ now: before + DELIVERY_LEASE_MS }), {
              retried: [],
              dead: [],
              clamped: 0,
            })
            assert.deepEqual(await renewAt(h.store, before, { ...first!, leaseToken: 'forged' }), [
              'lease_lost',
            ])
            assert.deepEqual(await renewAt(h.store, before, first!), ['ok'])
            assert.deepEqual(
              (await h.store.settle({ settlements: [completed(first), completed(second)] })).settled,
              ['ok', 'ok'],
            )
            // Beyond the waiter's limit: still in line for anybody.
            await claimAt(h.store, before, { queues: ['default'] }, low)
            return
          }
        },
      )

      deliveryTest('hands nothing to a waiter whose wait ended', async (h, waitForJobs) => {
        const peer = await h.openPeer()
        const claim = { limit: 10, leaseMs: LEASE_MS, workerId: 'gone' }
        const controller = new AbortController()
        const aborted = waitForJobs({ queues: ['default'], signal: controller.signal, claim })
        const timedOut = waitForJobs({ queues: ['default'], timeoutMs: 50, claim })
        await new Promise((resolve) => setTimeout(resolve, 100))
        controller.abort()
        assert.deepEqual(await within(SECOND, 'waitForJobs', aborted), { reason: 'aborted', jobs: [] })
        assert.deepEqual(await within(SECOND, 'waitForJobs', timedOut), { reason: 'timeout', jobs: [] })
        // A closed store's waiter is gone too, whether or not it could say so.
        const closing = await h.openPeer()
        const closed = closing.waitForWork({ queues: ['default'], timeoutMs: 5 * SECOND, claim })
        await new Promise((resolve) => setTimeout(resolve, 100))
        await closing.close()
        assert.deepEqual(await within(SECOND, 'waitForJobs', closed), { reason: 'aborted', jobs: [] })
        const now = Date.now()
        const id = await enqueueJob(peer, now)
        const [job] = await claimAt(h.store, now, { workerId: 'worker-2' }, id)
        assert.equal(job!.attempts, 1)
      })

      deliveryTest(
        'puts a delivered job its waiter never takes back in line, attempt unused, once its delivery lease ran out',
        async (h, waitForJobs) => {
          const peer = await h.openPeer()
          const claim = { limit: 1, leaseMs: LEASE_MS, workerId: 'frozen' }
          for (let attempt = 1; ; attempt++) {
            const waiting = waitForJobs({ queues: ['default'], timeoutMs: 5 * SECOND, claim })
            await new Promise((resolve) => setTimeout(resolve, 100 * attempt))
            const before = Date.now()
            const id = await enqueueJob(peer, before, { maxAttempts: 1 })
            const wake = await within(6 * SECOND, 'waitForJobs', waiting)
            if (wake.reason !== 'delivered') {
              assert.ok(attempt < 5, 'no wait was registered in time in 5 attempts')
              await claimAt(h.store, before)
              continue
            }
            const [handed] = wake.jobs
            // Not taken: the delivery lease runs out, and the job goes back as if never claimed.
            assert.deepEqual(await h.store.recoverExpired({ now: before + DELIVERY_LEASE_MS - 1 }), {
              retried: [],
              dead: [],
              clamped: 0,
            })
            assert.deepEqual(await h.store.recoverExpired({ now: before + DELIVERY_LEASE_MS }), {
              retried: [id],
              dead: [],
              clamped: 0,
            })
            const back = await getExisting(h.store, id)
            assert.equal(back.state, 'ready')
            assert.equal(back.attempts, 0, 'the attempt is given back')
            assert.equal(back.lastError, null, 'it never ran, so it never failed')
            assert.deepEqual(
              await h.store.renew({
                delivered: true,
                leases: [{ id, leaseToken: handed!.leaseToken }],
                leaseMs: LEASE_MS,
                now: before + DELIVERY_LEASE_MS,
              }),
              ['lease_lost'],
              'a waiter that comes back late cannot take it',
            )
            const [again] = await claimAt(h.store, before + DELIVERY_LEASE_MS, { workerId: 'other' }, id)
            assert.equal(again!.attempts, 1, 'with one attempt allowed, it still runs')
            return
          }
        },
      )

      deliveryTest(
        'hands a waiter only jobs of its names, leaving the others in line',
        async (h, waitForJobs) => {
          const peer = await h.openPeer()
          const claim = { limit: 10, leaseMs: LEASE_MS, workerId: 'waiter-1' }
          for (let attempt = 1; ; attempt++) {
            const waiting = waitForJobs({
              queues: ['default'],
              names: ['mine'],
              timeoutMs: 5 * SECOND,
              claim,
            })
            await new Promise((resolve) => setTimeout(resolve, 100 * attempt))
            const before = Date.now()
            const [theirs, mine] = await enqueueJobs(peer, before, [
              { name: 'theirs', priority: 5 },
              { name: 'mine' },
            ])
            const wake = await within(6 * SECOND, 'waitForJobs', waiting)
            if (wake.reason !== 'delivered') {
              assert.ok(attempt < 5, 'no wait was registered in time in 5 attempts')
              await claimAt(h.store, before, { limit: 10 })
              continue
            }
            assert.deepEqual(ids(wake.jobs), [mine])
            const other = await getExisting(h.store, theirs!)
            assert.equal(other.state, 'ready')
            assert.equal(other.attempts, 0)
            return
          }
        },
      )

      deliveryTest('hands over only jobs that are due, not scheduled ones', async (h, waitForJobs) => {
        const peer = await h.openPeer()
        const claim = { limit: 10, leaseMs: LEASE_MS, workerId: 'waiter-1' }
        const waiting = waitForJobs({ queues: ['default'], timeoutMs: 300, claim })
        await new Promise((resolve) => setTimeout(resolve, 100))
        await peer.enqueue({ jobs: [newJob({ delayMs: HOUR })] })
        assert.deepEqual(await within(2 * SECOND, 'waitForJobs', waiting), { reason: 'timeout', jobs: [] })
      })
    })

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
          stat('a', { ready: 1 }),
          stat('b', { ready: 2, scheduled: 1, active: 1, ...finished }),
        ])
        assert.deepEqual(await store.stats({ now: t }), [
          stat('a', { ready: 1 }),
          stat('b', { ready: 1, scheduled: 2, active: 1, ...finished }),
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
        await enqueueJobs(store, t, [
          { queue: 'zeta' },
          { queue: 'alpha' },
          { queue: 'mu' },
          { queue: 'beta' },
        ])
        const queues = (await store.stats({ now: t })).map((s) => s.queue)
        assert.deepEqual(queues, ['alpha', 'beta', 'mu', 'zeta'])
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
        assert.deepEqual(await store.recoverExpired({ now: t + HOUR }), { retried: [], dead: [], clamped: 0 })
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
        assert.deepEqual(
          await Promise.all(kept.map(async (id) => view(await getExisting(store, id)))),
          before,
        )
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
        assert.equal(
          await store.purge({ state: 'completed', olderThanMs: 3 * SECOND, now: t + 6 * SECOND }),
          2,
        )
        assert.equal(await getJob(store, j1), null)
        assert.equal(await getJob(store, j3), null, 'finished exactly olderThanMs ago')
        assert.equal((await getExisting(store, j5)).state, 'completed')
        assert.equal(
          await store.purge({ state: 'completed', olderThanMs: 3 * SECOND, now: t + 8 * SECOND - 1 }),
          0,
        )
        assert.equal(
          await store.purge({ state: 'completed', olderThanMs: 3 * SECOND, now: t + 8 * SECOND }),
          1,
        )
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
        assert.deepEqual(await store.control({ requestStop: true, now: t }), { stopRequestedAt: t })
        assert.deepEqual(await store.control(), { stopRequestedAt: t })
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

    describe('migrate', () => {
      test('does nothing when the schema is already current', async ({ store }) => {
        const first = await store.migrate()
        assert.deepEqual(first.applied, [])
        assert.equal(first.fromVersion, first.toVersion)
        assert.deepEqual(await store.migrate(), first)
      })

      test('can run in two store instances at once', async (h) => {
        const peer = await h.openPeer()
        const results = await Promise.all([h.store.migrate(), peer.migrate(), h.store.migrate()])
        for (const r of results) {
          assert.deepEqual(r.applied, [])
          assert.equal(r.fromVersion, r.toVersion)
        }
        const id = await enqueueJob(peer, Date.now())
        assert.equal((await getExisting(h.store, id)).state, 'ready')
      })
    })

    describe('close', () => {
      test('can be called twice', async ({ store }) => {
        await store.close()
        await store.close()
      })

      test("rejects every call after close with a FerryError coded 'store_closed'", async ({ store }) => {
        const t = Date.now()
        await enqueueJob(store, t)
        const job = one(await claimAt(store, t))
        await store.close()
        const calls: [string, () => Promise<unknown>][] = [
          ['migrate', () => store.migrate()],
          ['enqueue', () => store.enqueue({ jobs: [newJob()], now: t })],
          ['claim', () => claimAt(store, t)],
          ['settle', () => store.settle({ settlements: [completed(job)], now: t })],
          ['renew', () => renewAt(store, t, job)],
          ['recoverExpired', () => store.recoverExpired({ now: t })],
          ['getJob', () => getJob(store, job.id)],
          ['listJobs', () => store.listJobs()],
          ['stats', () => store.stats({ now: t })],
          ['retry', () => store.retry({ ids: [job.id], now: t })],
          ['cancel', () => store.cancel({ ids: [job.id], now: t })],
          ['purge', () => store.purge({ state: 'completed', now: t })],
        ]
        for (const [method, call] of calls) {
          await assert.rejects(call, (err: unknown) => {
            assert.ok(err instanceof FerryError, `${method} rejects with a FerryError (got ${String(err)})`)
            assert.equal(err.code, 'store_closed', `${method} rejects with code store_closed`)
            return true
          })
        }
      })

      bare('leaves no timers or watchers open once closed', async () => {
        const before = await settledHandleCounts()
        const h = await createHarness()
        try {
          const peer = await h.openPeer()
          await h.store.enqueue({ jobs: [newJob({ delayMs: HOUR })] })
          await peer.enqueue({ jobs: [newJob({ queue: 'other', delayMs: HOUR })] })
          const controller = new AbortController()
          const waits = [
            waitReason(h.store, { queues: ['default'], signal: controller.signal }),
            waitReason(peer, { queues: ['default', 'other'], timeoutMs: 10 }),
            waitReason(h.store, { queues: ['other'] }),
          ]
          controller.abort()
          await within(SECOND, 'waitForWork', Promise.all(waits.slice(0, 2)))
          await h.store.close()
          await within(SECOND, 'waitForWork', waits[2]!)
        } finally {
          await h.close()
        }
        // A closed handle leaves the list a turn or two later: give it up to a second to go.
        const kinds = ['Timeout', 'Immediate', 'FSEventWrap', 'StatWatcher', 'TCPWrap', 'PipeWrap']
        const leaked = (counts: Map<string, number>): string[] =>
          kinds
            .filter((kind) => (counts.get(kind) ?? 0) > (before.get(kind) ?? 0))
            .map((kind) => `${kind}: ${before.get(kind) ?? 0} before, ${counts.get(kind) ?? 0} after`)
        const deadline = Date.now() + SECOND
        let after = handleCounts()
        while (leaked(after).length > 0 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 10))
          after = handleCounts()
        }
        assert.deepEqual(leaked(after), [], 'handles left open')
      })
    })

    it('names only tests of this suite in its skip list', () => {
      assert.deepEqual(
        [...skipReasons.keys()].filter((title) => !defined.has(title)),
        [],
        'every skipped test name matches a test',
      )
    })
  })
}

// ── helpers ──────────────────────────────────────────────────────────────────────────────────

type WaitForJobs = (params: WaitParams & { claim: WaitClaim }) => Promise<WaitResult>

async function enqueueJobs(
  store: Store,
  now: number,
  overrides: readonly Partial<NewJob>[],
): Promise<JobId[]> {
  const results = await store.enqueue({ jobs: overrides.map((o) => newJob(o)), now })
  assert.equal(results.length, overrides.length)
  return results.map((r) => r.id)
}

async function enqueueJob(store: Store, now: number, overrides: Partial<NewJob> = {}): Promise<JobId> {
  const [id] = await enqueueJobs(store, now, [overrides])
  return id!
}

interface ClaimOptions {
  queues?: readonly string[]
  names?: readonly string[]
  limit?: number
  leaseMs?: number
  workerId?: string
}

/** Claims at `now`; with `expect`, asserts that exactly that job was claimed. */
async function claimAt(
  store: Store,
  now: number,
  options: ClaimOptions = {},
  expect?: JobId,
): Promise<ClaimedJob[]> {
  const { queues = ['default'], names, limit = 10, leaseMs = LEASE_MS, workerId = 'worker-1' } = options
  const claimed = await store.claim({ queues, names, limit, leaseMs, workerId, now })
  if (expect !== undefined) assert.deepEqual(ids(claimed), [expect])
  return claimed
}

function renewAt(store: Store, now: number, job: ClaimedJob, leaseMs = LEASE_MS): Promise<string[]> {
  return store.renew({ leases: [{ id: job.id, leaseToken: job.leaseToken }], leaseMs, now })
}

function completed(job: ClaimedJob | undefined, result: unknown = { done: true }): Settlement {
  assert.ok(job, 'a claimed job to complete')
  return { kind: 'completed', id: job.id, leaseToken: job.leaseToken, result }
}

/** Enqueues a job, claims and settles it at `now`; the job's queue must hold no other ready job. */
async function finishNew(
  store: Store,
  now: number,
  how: 'completed' | 'dead',
  overrides: Partial<NewJob> = {},
): Promise<JobId> {
  const id = await enqueueJob(store, now, overrides)
  const [job] = await claimAt(store, now, { queues: [overrides.queue ?? 'default'], limit: 1 }, id)
  const settlement: Settlement =
    how === 'completed'
      ? completed(job)
      : {
          kind: 'dead',
          id,
          leaseToken: job!.leaseToken,
          error: { kind: 'error', message: 'failed for good' },
        }
  assert.deepEqual((await store.settle({ settlements: [settlement], now })).settled, ['ok'])
  return id
}

async function getExisting(store: Store, id: JobId): Promise<Job> {
  const job = await getJob(store, id)
  assert.ok(job, `job ${id} exists`)
  return job
}

/** The documented fields of a job (a store may carry more), with an absent result as null. */
function view(job: Job): Job {
  return {
    id: job.id,
    queue: job.queue,
    name: job.name,
    payload: job.payload,
    state: job.state,
    priority: job.priority,
    runAt: job.runAt,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    timeoutMs: job.timeoutMs,
    uniqueKey: job.uniqueKey,
    lastError: job.lastError,
    result: job.result ?? null,
    workerId: job.workerId,
    leaseExpiresAt: job.leaseExpiresAt,
    createdAt: job.createdAt,
    updatedAt: job.updatedAt,
    finishedAt: job.finishedAt,
  }
}

function ids(jobs: readonly { id: JobId }[]): JobId[] {
  return jobs.map((j) => j.id)
}

function one<T>(items: readonly T[]): T {
  assert.equal(items.length, 1, `exactly one item (got ${items.length})`)
  return items[0]!
}

function stat(queue: string, counts: Partial<Omit<QueueStats, 'queue'>>): QueueStats {
  return { ...emptyStats(queue, 60_000), ...counts }
}

/** Every page of a listing, as lists of ids; fails if the cursor never ends. */
async function allPages(store: Store, params: { queue?: string; limit: number }): Promise<JobId[][]> {
  const pages: JobId[][] = []
  let cursor: string | undefined
  for (let i = 0; i < 100; i++) {
    const page = await store.listJobs({ ...params, ...(cursor === undefined ? {} : { cursor }) })
    pages.push(ids(page.jobs))
    if (page.nextCursor === null) return pages
    cursor = page.nextCursor
  }
  assert.fail('listJobs kept returning a cursor')
}

/** Handle counts once handles closed by earlier tests have left the list (they go a turn or two late). */
async function settledHandleCounts(): Promise<Map<string, number>> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 1))
  return handleCounts()
}

function handleCounts(): Map<string, number> {
  const counts = new Map<string, number>()
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1)
  return counts
}
