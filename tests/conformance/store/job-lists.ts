/**
 * What the dashboard's job lists and deletes rest on: listJobs's filters (name, unique key, time
 * of enqueue, payload), combined with state and queue and paged by cursor, and deleteJobs.
 * One area of the Store conformance suite (tests/conformance/store.case.ts runs them all).
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import { ValidationError } from '../../../src/core/errors.js'
import type { JobId } from '../../../src/core/job.js'
import type { ListJobsParams, Store } from '../../../src/store/store.js'
import { LIST_WALK_BUDGET } from '../../../src/store/kernel/list-page.js'
import { newJob, sortIds } from '../../support/store-harness.js'
import {
  MINUTE,
  UNKNOWN_ID,
  claimAt,
  completed,
  enqueueJob,
  enqueueJobs,
  finishNew,
  ids,
  stat,
  type ConformanceCases,
} from './kit.js'

/** Every job a filtered listing gives, following its cursor through short pages too. */
async function listAll(store: Store, params: ListJobsParams): Promise<{ ids: JobId[]; pages: number }> {
  const found: JobId[] = []
  let cursor: string | undefined
  for (let pages = 1; pages <= 1000; pages++) {
    const page = await store.listJobs({ ...params, ...(cursor === undefined ? {} : { cursor }) })
    assert.ok(page.jobs.length <= (params.limit ?? 50), 'no page is longer than its limit')
    found.push(...ids(page.jobs))
    if (page.nextCursor === null) return { ids: found, pages }
    cursor = page.nextCursor
  }
  assert.fail('listJobs kept returning a cursor')
}

function rejectsField(field: string): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof ValidationError, `a ValidationError, got ${String(error)}`)
    assert.equal(error.field, field)
    return true
  }
}

export function jobListsCases({ test }: ConformanceCases): void {
  describe('listJobs filters', () => {
    test('filters by name, alone and together with state and queue', async ({ store }) => {
      const t = Date.now()
      const doneA = await finishNew(store, t, 'completed', { queue: 'a', name: 'mail' })
      const [mailA, mailB, smsA, laterA] = await enqueueJobs(store, t, [
        { queue: 'a', name: 'mail' },
        { queue: 'b', name: 'mail' },
        { queue: 'a', name: 'sms' },
        { queue: 'a', name: 'mail', delayMs: MINUTE },
      ])
      const list = async (params: ListJobsParams): Promise<JobId[]> => (await listAll(store, params)).ids
      assert.deepEqual(await list({ name: 'mail' }), [laterA, mailB, mailA, doneA])
      assert.deepEqual(await list({ name: 'sms' }), [smsA])
      assert.deepEqual(await list({ name: 'mail', queue: 'a' }), [laterA, mailA, doneA])
      assert.deepEqual(await list({ name: 'mail', state: 'ready' }), [mailB, mailA])
      assert.deepEqual(await list({ name: 'mail', state: 'ready', queue: 'a' }), [mailA])
      assert.deepEqual(await list({ name: 'mail', state: 'completed', queue: 'a' }), [doneA])
      assert.deepEqual(await list({ name: 'mail', state: 'scheduled' }), [laterA])
      assert.deepEqual(await list({ name: 'nothing' }), [])
    })

    test('filters by when jobs were enqueued: createdAfter inclusive, createdBefore exclusive', async ({
      store,
    }) => {
      const t = Date.now()
      const first = await enqueueJob(store, t)
      const second = await enqueueJob(store, t + 10)
      const third = await enqueueJob(store, t + 20)
      const list = async (params: ListJobsParams): Promise<JobId[]> => (await listAll(store, params)).ids
      assert.deepEqual(await list({ createdAfter: t + 10 }), [third, second])
      assert.deepEqual(await list({ createdBefore: t + 10 }), [first])
      assert.deepEqual(await list({ createdAfter: t + 10, createdBefore: t + 20 }), [second])
      assert.deepEqual(await list({ createdAfter: t, createdBefore: t + 21, state: 'ready' }), [
        third,
        second,
        first,
      ])
      assert.deepEqual(await list({ createdAfter: t + 5, queue: 'default', name: 'test-job' }), [
        third,
        second,
      ])
      assert.deepEqual(await list({ createdAfter: t + 21 }), [])
    })

    test('finds the job holding a unique key, and none once its end freed the key', async ({ store }) => {
      const t = Date.now()
      const [held, freedAtEnd] = await enqueueJobs(store, t, [
        { queue: 'keys', uniqueKey: 'report:1' },
        { queue: 'other', uniqueKey: 'report:2', uniqueUntil: 'finished' },
      ])
      assert.deepEqual(ids((await store.listJobs({ uniqueKey: 'report:1' })).jobs), [held])
      assert.deepEqual(ids((await store.listJobs({ uniqueKey: 'report:1', queue: 'keys' })).jobs), [held])
      assert.deepEqual((await store.listJobs({ uniqueKey: 'report:1', state: 'dead' })).jobs, [])
      assert.deepEqual((await store.listJobs({ uniqueKey: 'report:1', cursor: held })).jobs, [])
      assert.deepEqual(ids((await store.listJobs({ uniqueKey: 'report:2' })).jobs), [freedAtEnd])
      const [claimed] = await claimAt(store, t, { queues: ['other'], limit: 1 }, freedAtEnd)
      await store.settle({ settlements: [completed(claimed)], now: t })
      assert.deepEqual(await store.listJobs({ uniqueKey: 'report:2' }), { jobs: [], nextCursor: null })
      assert.deepEqual(await store.listJobs({ uniqueKey: 'nobody' }), { jobs: [], nextCursor: null })
    })

    test('pages through combined filters across pages, every matching job once', async ({ store }) => {
      const t = Date.now()
      const enqueued = await enqueueJobs(
        store,
        t,
        Array.from({ length: 24 }, (_, i) => ({
          queue: i % 2 === 0 ? 'even' : 'odd',
          name: i % 3 === 0 ? 'third' : 'other',
        })),
      )
      const expected = enqueued.filter((_, i) => i % 2 === 0 && i % 3 === 0).reverse()
      for (const params of [
        { name: 'third', queue: 'even' },
        { name: 'third', queue: 'even', state: 'ready' },
        { name: 'third', queue: 'even', createdAfter: t },
      ] as const) {
        const { ids: found, pages } = await listAll(store, { ...params, limit: 2 })
        assert.deepEqual(found, expected, JSON.stringify(params))
        assert.ok(pages >= 2, 'more than one page')
      }
    })

    test('walks a bounded number of jobs per page: a short page goes on with its cursor', async ({
      store,
    }) => {
      const t = Date.now()
      const wanted = await enqueueJob(store, t, { name: 'rare' })
      await enqueueJobs(
        store,
        t,
        Array.from({ length: LIST_WALK_BUDGET + 10 }, () => ({ name: 'common' })),
      )
      const first = await store.listJobs({ name: 'rare' })
      assert.deepEqual(first.jobs, [], 'the first walk meets only other jobs')
      assert.notEqual(first.nextCursor, null)
      const { ids: found } = await listAll(store, { name: 'rare', limit: 10 })
      assert.deepEqual(found, [wanted])
    })

    test('searches payloads where the store can, and refuses the filter where it cannot', async ({
      store,
    }) => {
      const t = Date.now()
      const [a, b] = await enqueueJobs(store, t, [
        { payload: '{"user":{"id":7,"plan":"pro"},"tags":["x","y"]}' },
        { payload: '{"user":{"id":8,"plan":"pro"}}' },
        { payload: '"just text"' },
      ])
      if (!store.capabilities.payloadSearch) {
        await assert.rejects(
          store.listJobs({ payloadContains: { user: { id: 7 } } }),
          rejectsField('payloadContains'),
        )
        return
      }
      const list = async (params: ListJobsParams): Promise<JobId[]> => (await listAll(store, params)).ids
      assert.deepEqual(await list({ payloadContains: { user: { id: 7 } } }), [a])
      assert.deepEqual(await list({ payloadContains: { user: { plan: 'pro' } } }), [b, a])
      assert.deepEqual(await list({ payloadContains: { tags: ['y'] }, state: 'ready' }), [a])
      assert.deepEqual(await list({ payloadContains: { user: { id: 9 } } }), [])
      await assert.rejects(store.listJobs({ payloadContains: [1] as never }), rejectsField('payloadContains'))
    })

    test('refuses bad filter values, naming the field', async ({ store }) => {
      const bad: [ListJobsParams, string][] = [
        [{ name: '' }, 'name'],
        [{ name: 'has space' }, 'name'],
        [{ name: 7 as never }, 'name'],
        [{ uniqueKey: '' }, 'uniqueKey'],
        [{ uniqueKey: 3 as never }, 'uniqueKey'],
        [{ createdAfter: 'yesterday' as never }, 'createdAfter'],
        [{ createdAfter: 1.5 }, 'createdAfter'],
        [{ createdBefore: Number.NaN }, 'createdBefore'],
        [{ createdBefore: Infinity }, 'createdBefore'],
        [{ payloadContains: null as never }, 'payloadContains'],
        [{ ids: ['1'], name: 'x' }, 'ids'],
        [{ ids: ['1'], createdAfter: 1 }, 'ids'],
        [{ createdSince: 1 } as never, 'createdSince'],
      ]
      for (const [params, field] of bad) {
        await assert.rejects(store.listJobs(params), rejectsField(field), JSON.stringify(params))
      }
    })
  })

  describe('deleteJobs', () => {
    test('deletes scheduled, ready, completed and dead jobs, never an active one', async ({ store }) => {
      const t = Date.now()
      const done = await finishNew(store, t, 'completed', { queue: 'q' })
      const dead = await finishNew(store, t, 'dead', { queue: 'q' })
      const [running] = await enqueueJobs(store, t, [{ queue: 'q' }])
      await claimAt(store, t, { queues: ['q'], limit: 1 }, running)
      const [ready, scheduled, grouped, kept] = await enqueueJobs(store, t, [
        { queue: 'q' },
        { queue: 'q', delayMs: MINUTE, expiresInMs: 2 * MINUTE },
        { queue: 'q', group: 'g1' },
        { queue: 'q', name: 'kept' },
      ])
      const count = await store.deleteJobs({
        ids: [done, dead, running!, ready!, scheduled!, grouped!, UNKNOWN_ID, 'not-an-id'],
        now: t,
      })
      assert.equal(count, 5)
      const left = await store.listJobs({ ids: [done, dead, running!, ready!, scheduled!, grouped!, kept!] })
      assert.deepEqual(sortIds(ids(left.jobs)), sortIds([running!, kept!]))
      assert.deepEqual(await store.stats({ now: t }), [stat('q', { ready: 1, active: 1, oldestReadyAt: t })])
      // What is left in line is exactly the job not deleted: no claim meets a deleted one.
      assert.deepEqual(ids(await claimAt(store, t + 2 * MINUTE, { queues: ['q'], limit: 10 })), [kept])
      const swept = await store.recoverExpired({ now: t + 3 * MINUTE, expireJobs: true, leases: [] })
      assert.deepEqual(swept.expired, [], 'a deleted job is not ended by its start deadline')
      assert.equal(await store.deleteJobs({ ids: [done, ready!] }), 0, 'a job is deleted once')
      assert.equal(await store.deleteJobs({ ids: [] }), 0)
    })

    test('frees the unique key of the job it deletes', async ({ store }) => {
      const t = Date.now()
      const first = await enqueueJob(store, t, { uniqueKey: 'invoice:1' })
      const [again] = await store.enqueue({ jobs: [newJob({ uniqueKey: 'invoice:1' })], now: t })
      assert.deepEqual(again, { id: first, created: false })
      assert.equal(await store.deleteJobs({ ids: [first], now: t }), 1)
      const [fresh] = await store.enqueue({ jobs: [newJob({ uniqueKey: 'invoice:1' })], now: t })
      assert.equal(fresh!.created, true)
      assert.notEqual(fresh!.id, first, 'an id is never given twice')
      assert.deepEqual(ids((await store.listJobs({ uniqueKey: 'invoice:1' })).jobs), [fresh!.id])
    })

    test('refuses params that are not a list of ids, naming the field', async ({ store }) => {
      await assert.rejects(store.deleteJobs({ ids: '1' as never }), rejectsField('ids'))
      await assert.rejects(store.deleteJobs({ ids: ['1'], state: 'dead' } as never), rejectsField('state'))
    })
  })
}
