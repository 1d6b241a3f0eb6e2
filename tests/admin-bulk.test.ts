/**
 * The admin layer's bulk actions (src/admin/bulk.ts) and deleteJobs, on every store: an action on
 * every matching job goes a batch at a time, visits each job once while it moves jobs out of the
 * filter it pages through, stops on its signal, and refuses bad params before changing anything.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import { deleteJobs, retryJobs, runBulkAction, ValidationError, type BulkProgress } from '../src/index.js'
import type { JobId } from '../src/core/job.js'
import type { Store } from '../src/store/store.js'
import { STORES, freshStore } from './support/stores.js'
import { newJob, sortIds } from './support/store-harness.js'

const MINUTE = 60_000

/** `count` dead jobs of `queue`, oldest first. */
async function deadJobs(store: Store, queue: string, count: number, now: number): Promise<JobId[]> {
  await store.enqueue({ jobs: Array.from({ length: count }, () => newJob({ queue })), now })
  const claimed = await store.claim({ queues: [queue], limit: count, leaseMs: MINUTE, workerId: 'w', now })
  assert.equal(claimed.length, count)
  await store.settle({
    settlements: claimed.map((job) => ({
      kind: 'dead' as const,
      id: job.id,
      leaseToken: job.leaseToken,
      error: { kind: 'error' as const, message: 'failed for good' },
    })),
    now,
  })
  return claimed.map((job) => job.id)
}

async function idsOf(store: Store, params: Parameters<Store['listJobs']>[0]): Promise<JobId[]> {
  return sortIds((await store.listJobs({ limit: 1000, ...params })).jobs.map((job) => job.id))
}

function namesField(field: string): (error: unknown) => boolean {
  return (error) => error instanceof ValidationError && error.field === field
}

for (const storeUnderTest of STORES) {
  describe(`bulk actions on ${storeUnderTest.name}`, { skip: storeUnderTest.skip }, () => {
    it('retries every dead job of a queue over several batches, each once, as retry moves them out of the list', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      const now = Date.now()
      const dead = await deadJobs(store, 'q', 25, now)
      const otherDead = await deadJobs(store, 'other', 3, now)
      const progress: BulkProgress[] = []
      const result = await runBulkAction(store, {
        action: 'retry',
        filter: { state: 'dead', queue: 'q' },
        batchSize: 10,
        onProgress: (p) => progress.push(p),
      })
      assert.deepEqual(result, { matched: 25, done: 25, changed: 25, skipped: 0, stopped: false })
      assert.deepEqual(
        progress.map((p) => p.done),
        [10, 20, 25],
      )
      assert.deepEqual(await idsOf(store, { state: 'ready', queue: 'q' }), sortIds(dead))
      assert.deepEqual(await idsOf(store, { state: 'dead' }), sortIds(otherDead), 'other queues untouched')
    })

    it('retryJobs with allDead goes through the batches and says how many moved', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      await deadJobs(store, 'q', 4, Date.now())
      await deadJobs(store, 'other', 2, Date.now())
      assert.deepEqual(await retryJobs(store, { allDead: true, queue: 'q' }), { movedCount: 4 })
      assert.deepEqual(await retryJobs(store, { allDead: true }), { movedCount: 2 })
      assert.deepEqual(await idsOf(store, { state: 'dead' }), [])
    })

    it('deletes every matching job, all states but active, over batches', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      const now = Date.now()
      await deadJobs(store, 'q', 5, now)
      await store.enqueue({ jobs: Array.from({ length: 12 }, () => newJob({ queue: 'q' })), now })
      const [active] = await store.claim({ queues: ['q'], limit: 1, leaseMs: MINUTE, workerId: 'w', now })
      const kept = await store.enqueue({ jobs: [newJob({ queue: 'kept' })], now })
      const result = await runBulkAction(store, { action: 'delete', filter: { queue: 'q' }, batchSize: 4 })
      assert.deepEqual(result, { matched: 17, done: 17, changed: 16, skipped: 1, stopped: false })
      assert.deepEqual(await idsOf(store, {}), sortIds([active!.id, kept[0]!.id]))
    })

    it('stops between batches when its signal aborts, the batches done staying done', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      await deadJobs(store, 'q', 12, Date.now())
      const controller = new AbortController()
      const result = await runBulkAction(store, {
        action: 'retry',
        filter: { state: 'dead' },
        batchSize: 5,
        signal: controller.signal,
        onProgress: () => controller.abort(),
      })
      assert.deepEqual(result, { matched: 5, done: 5, changed: 5, skipped: 0, stopped: true })
      assert.equal((await idsOf(store, { state: 'dead' })).length, 7)
    })

    it('runs now, reprioritises and cancels jobs by id, skipping those the action does not apply to', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      const now = Date.now()
      const [scheduled, ready, other] = await store.enqueue({
        jobs: [newJob({ delayMs: 10 * MINUTE }), newJob(), newJob({ delayMs: 10 * MINUTE })],
        now,
      })
      const ids = [scheduled!.id, ready!.id, '999999999']
      assert.deepEqual(await runBulkAction(store, { action: 'runNow', ids, now }), {
        matched: 2,
        done: 2,
        changed: 1,
        skipped: 1,
        stopped: false,
      })
      assert.deepEqual(await idsOf(store, { state: 'ready' }), sortIds([scheduled!.id, ready!.id]))
      const byPriority = await runBulkAction(store, {
        action: { priority: 7 },
        ids: [scheduled!.id, other!.id],
      })
      assert.equal(byPriority.changed, 2)
      const priorities = (await store.listJobs({ ids: [scheduled!.id, other!.id] })).jobs.map(
        (job) => job.priority,
      )
      assert.deepEqual(priorities, [7, 7])
      const cancelled = await runBulkAction(store, { action: 'cancel', ids: [other!.id] })
      assert.equal(cancelled.changed, 1)
      assert.deepEqual(await idsOf(store, { state: 'dead' }), [other!.id])
    })

    it('refuses bad params naming the field, before any job changes', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      const [dead] = await deadJobs(store, 'q', 1, Date.now())
      const bad: [Parameters<typeof runBulkAction>[1], string][] = [
        [{ action: 'explode' as never, filter: {} }, 'action'],
        [{ action: { priority: 1.5 }, filter: {} }, 'action.priority'],
        [{ action: 'retry' } as never, 'ids'],
        [{ action: 'retry', ids: [dead!], filter: {} }, 'ids'],
        [{ action: 'retry', ids: ['abc'] }, 'ids'],
        [{ action: 'retry', filter: { name: 'has space' } }, 'filter.name'],
        [{ action: 'retry', filter: { state: 'gone' as never } }, 'filter.state'],
        [{ action: 'retry', filter: { cursor: '1' } as never }, 'filter.cursor'],
        [{ action: 'retry', filter: {}, batchSize: 0 }, 'batchSize'],
        [{ action: 'retry', filter: {}, batchSize: 5000 }, 'batchSize'],
      ]
      for (const [params, field] of bad) {
        await assert.rejects(runBulkAction(store, params), namesField(field), JSON.stringify(params))
      }
      assert.deepEqual(await idsOf(store, { state: 'dead' }), [dead], 'nothing changed')
      await assert.rejects(deleteJobs(store, { ids: ['x'] }), namesField('ids'))
      assert.deepEqual(await deleteJobs(store, { ids: [dead!] }), { deletedCount: 1 })
    })
  })
}
