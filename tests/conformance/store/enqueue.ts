/**
 * What enqueue promises: ids, unique keys, validation, scheduling.
 * One area of the Store conformance suite (tests/conformance/store.case.ts runs them all).
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import { ValidationError } from '../../../src/core/errors.js'
import type { JobId } from '../../../src/core/job.js'
import { newJob, sortIds, compareIds } from '../../support/store-harness.js'
import { getJob } from '../../support/store-calls.js'
import {
  SECOND,
  MINUTE,
  HOUR,
  enqueueJobs,
  enqueueJob,
  claimAt,
  completed,
  finishNew,
  getExisting,
  view,
  stat,
  type ConformanceCases,
} from './kit.js'

export function enqueueCases({ test }: ConformanceCases): void {
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
        assert.deepEqual((await getExisting(store, id)).payload, { i }, 'the i-th id belongs to the i-th job')
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
            group: 'tenant:7 ✓',
            expiresInMs: 3_600_000,
            schedule: { id: 'welcomes', slot: t - 5, late: false },
            backoff: { type: 'list', delaysMs: [10, 100] },
            keepForMs: 7 * 24 * 3_600_000,
            trace: {
              traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
              tracestate: 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7',
            },
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
        group: 'tenant:7 ✓',
        expiresAt: t + 3_600_000,
        schedule: { id: 'welcomes', slot: t - 5, late: false },
        backoff: { type: 'list', delaysMs: [10, 100] },
        keepForMs: 7 * 24 * 3_600_000,
        trace: {
          traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
          tracestate: 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7',
        },
        lastError: null,
        result: null,
        progress: null,
        logs: [],
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

    test('gives each job of a large mixed batch its own id, in input order', async ({ store }) => {
      // Long runs of plain jobs broken by unique keys (new ones and a held one) and scheduled jobs:
      // a store may write the runs in statements of many rows, and must still map ids to jobs.
      const t = Date.now()
      const [held] = await store.enqueue({
        jobs: [newJob({ uniqueKey: 'held', payload: '{"held":true}' })],
        now: t,
      })
      const jobs = Array.from({ length: 300 }, (_, i) =>
        newJob({
          payload: JSON.stringify({ i }),
          queue: i % 2 === 0 ? 'even' : 'odd',
          ...(i === 70 ? { uniqueKey: 'held' } : i % 97 === 5 ? { uniqueKey: `new-${i}` } : {}),
          ...(i % 41 === 0 ? { delayMs: MINUTE } : {}),
          ...(i === 299 ? { timeoutMs: 5 * SECOND } : {}),
        }),
      )
      const results = await store.enqueue({ jobs, now: t })
      assert.equal(results.length, 300)
      assert.deepEqual(results[70], { id: held!.id, created: false })
      const created = results.filter((r, i) => i !== 70)
      for (const r of created) assert.equal(r.created, true)
      for (let i = 1; i < created.length; i++) {
        assert.equal(compareIds(created[i - 1]!.id, created[i]!.id), -1, 'ids increase in input order')
      }
      for (const [i, r] of results.entries()) {
        if (i === 70) continue
        const job = await getExisting(store, r.id)
        assert.deepEqual(job.payload, { i }, `the id of job ${i} is its own`)
        assert.equal(job.queue, i % 2 === 0 ? 'even' : 'odd')
        assert.equal(job.state, i % 41 === 0 ? 'scheduled' : 'ready')
        assert.equal(job.timeoutMs, i === 299 ? 5 * SECOND : null)
      }
      assert.deepEqual(await store.stats({ now: t }), [
        stat('default', { ready: 1, oldestReadyAt: t }),
        stat('even', { ready: 150 - 4 - 1, scheduled: 4, oldestReadyAt: t }), // job 70's key is held
        stat('odd', { ready: 150 - 4, scheduled: 4, oldestReadyAt: t }),
      ])
    })

    test('stores every column of each job of a large batch in runs that share their options', async ({
      store,
    }) => {
      // Runs of jobs alike but for their payloads, as a bulk enqueue of one kind of job gives: a
      // store may bind what such a run shares once, and must still give each job all of it.
      const t = Date.now()
      const kindOf = (i: number) =>
        i < 100
          ? {
              queue: 'mail',
              name: 'send',
              priority: 3,
              maxAttempts: 7,
              timeoutMs: 5 * SECOND,
              delayMs: MINUTE,
            }
          : {
              queue: 'reports',
              name: 'build',
              priority: -1,
              maxAttempts: 2,
              timeoutMs: null,
              runAt: t - HOUR,
            }
      const jobs = Array.from({ length: 200 }, (_, i) =>
        newJob({ payload: JSON.stringify({ i }), ...kindOf(i) }),
      )
      const results = await store.enqueue({ jobs, now: t })
      for (const [i, r] of results.entries()) {
        assert.equal(r.created, true)
        const job = await getExisting(store, r.id)
        const kind = kindOf(i)
        assert.deepEqual(job.payload, { i }, `the payload of job ${i} is its own`)
        assert.deepEqual(
          {
            queue: job.queue,
            name: job.name,
            priority: job.priority,
            maxAttempts: job.maxAttempts,
            timeoutMs: job.timeoutMs,
            runAt: job.runAt,
            state: job.state,
            createdAt: job.createdAt,
          },
          {
            queue: kind.queue,
            name: kind.name,
            priority: kind.priority,
            maxAttempts: kind.maxAttempts,
            timeoutMs: kind.timeoutMs,
            runAt: 'runAt' in kind ? kind.runAt : t + MINUTE,
            state: i < 100 ? 'scheduled' : 'ready',
            createdAt: t,
          },
          `job ${i}`,
        )
      }
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
      assert.deepEqual(await store.stats({ now: t }), [stat('default', { ready: 2, oldestReadyAt: t })])
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
}
