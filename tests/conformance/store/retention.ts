/**
 * What retention promises: a queue's retention kept in its control record, and prune() deleting
 * finished jobs past it (the defaults, a queue's own ages and counts, a job's own keepForMs) in
 * bounded batches, oldest first, freeing their unique keys as purge does.
 * One area of the Store conformance suite (tests/conformance/store.case.ts runs them all).
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import { ValidationError } from '../../../src/core/errors.js'
import type { JobId } from '../../../src/core/job.js'
import type { ControlParams, QueueRetention, Store } from '../../../src/store/store.js'
import { getJob } from '../../support/store-calls.js'
import { newJob } from '../../support/store-harness.js'
import {
  SECOND,
  HOUR,
  claimAt,
  completed,
  enqueueJob,
  enqueueJobs,
  finishNew,
  getExisting,
  one,
  view,
  type ConformanceCases,
} from './kit.js'

const DAY = 24 * HOUR
const DEFAULTS: QueueRetention = { completedMs: null, deadMs: null, completedCount: null, deadCount: null }

async function retentionOf(store: Store, queue: string): Promise<QueueRetention | undefined> {
  return (await store.control()).queues.find((entry) => entry.queue === queue)?.retention
}

/** Which of these jobs still exist, in the order given. */
async function existing(store: Store, ids: readonly JobId[]): Promise<JobId[]> {
  const found: JobId[] = []
  for (const id of ids) if ((await getJob(store, id)) !== null) found.push(id)
  return found
}

/** Finishes jobs one after the other, 1 s apart from `t`: the first is the oldest. */
async function finishSeries(
  store: Store,
  t: number,
  count: number,
  how: 'completed' | 'dead',
  queue = 'default',
): Promise<JobId[]> {
  const ids: JobId[] = []
  for (let n = 0; n < count; n++) ids.push(await finishNew(store, t + n * SECOND, how, { queue }))
  return ids
}

export function retentionCases({ test }: ConformanceCases): void {
  describe('retention: a queue setting', () => {
    test('keeps a queue retention, each field replaced as given, and clear puts back the defaults', async ({
      store,
    }) => {
      const record = await store.control({ retention: { queue: 'mail', completedMs: HOUR, deadCount: 100 } })
      const set = { ...DEFAULTS, completedMs: HOUR, deadCount: 100 }
      assert.deepEqual(record.queues, [
        {
          queue: 'mail',
          paused: null,
          limits: { concurrency: null, rate: null, groupConcurrency: null, groupRate: null },
          retention: set,
        },
      ])
      await store.control({ retention: { queue: 'mail', deadMs: Infinity, completedMs: null } })
      assert.deepEqual(
        await retentionOf(store, 'mail'),
        { ...DEFAULTS, deadMs: Infinity, deadCount: 100 },
        'the fields given replaced, Infinity kept as forever, the others left',
      )
      await store.control({ pause: { queue: 'mail' } })
      await store.control({ retention: { queue: 'mail', clear: true } })
      assert.deepEqual(await retentionOf(store, 'mail'), DEFAULTS, 'the pause stays')
      await store.control({ resume: { queue: 'mail' } })
      assert.deepEqual((await store.control()).queues, [], 'a queue back to every default is not listed')
    })

    test('refuses a bad retention, naming the field, and writes nothing', async ({ store }) => {
      const bad: [ControlParams['retention'], string][] = [
        [{ queue: 'q', completedMs: -1 }, 'retention.completedMs'],
        [{ queue: 'q', deadMs: 1.5 }, 'retention.deadMs'],
        [{ queue: 'q', deadMs: NaN }, 'retention.deadMs'],
        [{ queue: 'q', completedMs: 200 * 365 * DAY }, 'retention.completedMs'],
        [{ queue: 'q', completedCount: -1 }, 'retention.completedCount'],
        [{ queue: 'q', deadCount: Infinity }, 'retention.deadCount'],
        [{ queue: 'q' }, 'retention'],
        [{ queue: 'q', clear: true, deadMs: HOUR } as never, 'retention.deadMs'],
        [{ queue: 'bad queue', deadMs: HOUR }, 'retention.queue'],
        [{ queue: 'q', keepMs: HOUR } as never, 'retention.keepMs'],
      ]
      for (const [retention, field] of bad) {
        await assert.rejects(
          store.control({ retention }),
          (error: unknown) => error instanceof ValidationError && error.field === field,
          `${JSON.stringify(retention)} is refused on ${field}`,
        )
      }
      await assert.rejects(
        store.control({ retention: { queue: 'q', deadMs: HOUR }, pause: { queue: 'q' } }),
        ValidationError,
        'one queue change a call',
      )
      assert.deepEqual((await store.control()).queues, [])
    })
  })

  describe('retention: prune', () => {
    test('deletes completed jobs a day after they finished and dead jobs 14 days after, by default', async ({
      store,
    }) => {
      const t = Date.now()
      const done = await finishNew(store, t, 'completed')
      const dead = await finishNew(store, t, 'dead')
      const [ready, scheduled] = await enqueueJobs(store, t, [{ queue: 'other' }, { delayMs: 30 * DAY }])
      const activeId = await enqueueJob(store, t, { queue: 'active' })
      one(await claimAt(store, t, { queues: ['active'] }, activeId))
      const unfinished = [ready!, scheduled!, activeId]
      const before = await Promise.all(unfinished.map(async (id) => view(await getExisting(store, id))))

      assert.deepEqual(await store.prune({ now: t + DAY - 1 }), { deleted: 0, more: false })
      assert.deepEqual(await store.prune({ now: t + DAY }), { deleted: 1, more: false })
      assert.deepEqual(await existing(store, [done, dead]), [dead])
      assert.deepEqual(await store.prune({ now: t + 14 * DAY - 1 }), { deleted: 0, more: false })
      assert.deepEqual(await store.prune({ now: t + 14 * DAY }), { deleted: 1, more: false })
      assert.deepEqual(await existing(store, [done, dead]), [])
      assert.deepEqual(
        await Promise.all(unfinished.map(async (id) => view(await getExisting(store, id)))),
        before,
        'jobs that did not finish are never pruned',
      )
    })

    test("deletes by a queue's own ages, and keeps forever when asked", async ({ store }) => {
      const t = Date.now()
      await store.control({ retention: { queue: 'short', completedMs: HOUR, deadMs: 0 } })
      await store.control({ retention: { queue: 'forever', completedMs: Infinity, deadMs: Infinity } })
      const shortDone = await finishNew(store, t, 'completed', { queue: 'short' })
      const shortDead = await finishNew(store, t, 'dead', { queue: 'short' })
      const keptDone = await finishNew(store, t, 'completed', { queue: 'forever' })
      const keptDead = await finishNew(store, t, 'dead', { queue: 'forever' })
      const plain = await finishNew(store, t, 'completed')

      assert.deepEqual(await store.prune({ now: t }), { deleted: 1, more: false }, 'an age of 0: at once')
      assert.deepEqual(await existing(store, [shortDead]), [])
      assert.deepEqual(await store.prune({ now: t + HOUR }), { deleted: 1, more: false })
      assert.deepEqual(await existing(store, [shortDone]), [])
      await store.prune({ now: t + 1000 * DAY })
      assert.deepEqual(await existing(store, [keptDone, keptDead, plain]), [keptDone, keptDead])
    })

    test("keeps the newest jobs of a queue's count limit, per state, within its ages", async ({ store }) => {
      const t = Date.now()
      await store.control({ retention: { queue: 'q', completedCount: 2, deadCount: 0 } })
      const done = await finishSeries(store, t, 5, 'completed', 'q')
      const dead = await finishSeries(store, t, 2, 'dead', 'q')
      const other = await finishSeries(store, t, 3, 'completed')

      assert.deepEqual(await store.prune({ now: t + 10 * SECOND }), { deleted: 5, more: false })
      assert.deepEqual(await existing(store, done), done.slice(3), 'the newest 2 stay')
      assert.deepEqual(await existing(store, dead), [], 'a count of 0 keeps none')
      assert.deepEqual(await existing(store, other), other, 'other queues keep theirs')
      assert.deepEqual(await store.prune({ now: t + 10 * SECOND }), { deleted: 0, more: false })
      // The age still applies to the jobs the count keeps.
      await store.prune({ now: t + 4 * SECOND + DAY })
      assert.deepEqual(await existing(store, done), [])
    })

    test('deletes a batch at most per call, oldest first, and says when more may be left', async ({
      store,
    }) => {
      const t = Date.now()
      const done = await finishSeries(store, t, 5, 'completed')
      const now = t + 30 * DAY
      assert.deepEqual(await store.prune({ now, limit: 2 }), { deleted: 2, more: true })
      assert.deepEqual(await existing(store, done), done.slice(2), 'the oldest went first')
      assert.deepEqual(await store.prune({ now, limit: 2 }), { deleted: 2, more: true })
      assert.deepEqual(await store.prune({ now, limit: 2 }), { deleted: 1, more: false })
      assert.deepEqual(await existing(store, done), [])
    })

    test('frees the unique keys of the jobs it deletes, as purge does', async ({ store }) => {
      const t = Date.now()
      const first = await finishNew(store, t, 'completed', { uniqueKey: 'report:2026-12' })
      await store.prune({ now: t + DAY })
      assert.equal(await getJob(store, first), null)
      const [result] = await store.enqueue({
        jobs: [newJob({ uniqueKey: 'report:2026-12' })],
        now: t + DAY,
      })
      assert.equal(result!.created, true, 'the key is free again')
      assert.notEqual(result!.id, first, 'and the id is not given again')
    })

    test("keeps a job with its own keepForMs that long, in place of its queue's retention", async ({
      store,
    }) => {
      const t = Date.now()
      await store.control({ retention: { queue: 'q', completedCount: 1 } })
      const longer = await finishNew(store, t, 'completed', { queue: 'q', keepForMs: 3 * DAY })
      const shorter = await finishNew(store, t, 'dead', { queue: 'q', keepForMs: SECOND })
      const forever = await finishNew(store, t, 'completed', { queue: 'q', keepForMs: Infinity })
      const plain = await finishSeries(store, t, 2, 'completed', 'q')
      assert.equal((await getExisting(store, longer)).keepForMs, 3 * DAY)
      assert.equal((await getExisting(store, forever)).keepForMs, Infinity)
      assert.equal((await getExisting(store, plain[0]!)).keepForMs, null)

      assert.deepEqual(await store.prune({ now: t + SECOND }), { deleted: 2, more: false })
      assert.deepEqual(
        await existing(store, [longer, shorter, forever, ...plain]),
        [longer, forever, plain[1]!],
        'its own time for the job that has one; the count limit counts only the others',
      )
      await store.prune({ now: t + 2 * DAY })
      assert.deepEqual(await existing(store, [longer, forever, ...plain]), [longer, forever])
      assert.deepEqual(await store.prune({ now: t + 3 * DAY }), { deleted: 1, more: false })
      await store.prune({ now: t + 1000 * DAY })
      assert.deepEqual(await existing(store, [longer, forever]), [forever])
    })

    test('counts, retries and purges a job with its own keepForMs as any other, and prunes it once', async ({
      store,
    }) => {
      const t = Date.now()
      const dead = await finishNew(store, t, 'dead', { keepForMs: HOUR })
      const done = await finishNew(store, t, 'completed', { keepForMs: HOUR })
      const plain = await finishNew(store, t, 'completed')
      const counts = async (): Promise<[number, number]> => {
        const [stats] = await store.stats({ now: t })
        return [stats?.completed ?? 0, stats?.dead ?? 0]
      }
      assert.deepEqual(await counts(), [2, 1])
      assert.equal(await store.retry({ ids: [dead], now: t }), 1)
      assert.deepEqual(await counts(), [2, 0])
      const [again] = await claimAt(store, t + SECOND, {}, dead)
      await store.settle({ settlements: [completed(again)], now: t + SECOND })
      assert.deepEqual(await counts(), [3, 0])
      // Retried and completed again: its hour runs from its new finish.
      assert.deepEqual(await store.prune({ now: t + HOUR }), { deleted: 1, more: false })
      assert.deepEqual(await existing(store, [dead, done, plain]), [dead, plain])
      assert.equal(await store.purge({ state: 'completed', now: t + HOUR }), 2)
      assert.deepEqual(await existing(store, [dead, plain]), [])
      assert.deepEqual(await counts(), [0, 0])
      assert.deepEqual(await store.prune({ now: t + 2 * HOUR }), { deleted: 0, more: false })
    })

    test('refuses a bad limit or an unknown param, and deletes nothing', async ({ store }) => {
      const t = Date.now()
      const done = await finishNew(store, t, 'completed')
      for (const [params, field] of [
        [{ limit: 0 }, 'limit'],
        [{ limit: 1.5 }, 'limit'],
        [{ limit: 1_000_000 }, 'limit'],
        [{ olderThanMs: 0 }, 'olderThanMs'],
      ] as const) {
        await assert.rejects(
          store.prune({ now: t + 30 * DAY, ...params } as never),
          (error: unknown) => error instanceof ValidationError && error.field === field,
        )
      }
      assert.deepEqual(await existing(store, [done]), [done])
    })
  })
}
