/**
 * How long a unique key holds (docs/uniqueness.md): until its job finishes, until it starts, or
 * for a window from its enqueue (a throttle). Each mode frees the key at its transition and not
 * before, on every store; the key a job had stays on it for whoever reads the job.
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import { createClient } from '../../../src/client/client.js'
import { ValidationError } from '../../../src/core/errors.js'
import type { JobId, NewJob } from '../../../src/core/job.js'
import type { Store } from '../../../src/store/store.js'
import { newJob } from '../../support/store-harness.js'
import {
  claimAt,
  completed,
  enqueueJob,
  finishNew,
  deliveredOnEnqueue,
  getExisting,
  HOUR,
  LEASE_MS,
  MINUTE,
  SECOND,
  type ConformanceCases,
} from './kit.js'

export function uniqueModesCases({ test, deliveryTest }: ConformanceCases): void {
  describe('unique keys that end with their job', () => {
    /** Enqueues the key again at `now`; returns the result. */
    const enqueueKey = async (store: Store, now: number, overrides: Partial<NewJob>) => {
      const [result] = await store.enqueue({ jobs: [newJob(overrides)], now })
      return result!
    }
    const held = async (store: Store, now: number, key: string, holder: JobId): Promise<void> => {
      assert.deepEqual(await enqueueKey(store, now, { uniqueKey: key }), { id: holder, created: false })
    }
    /** Scheduled, so that later claims of the case take only the jobs it claims. */
    const free = async (store: Store, now: number, key: string): Promise<JobId> => {
      const result = await enqueueKey(store, now, { uniqueKey: key, delayMs: HOUR })
      assert.equal(result.created, true, `the key ${key} is free`)
      return result.id
    }

    test("'started' holds the key while its job waits, and frees it when a worker claims it", async ({
      store,
    }) => {
      const t = Date.now()
      const first = await enqueueJob(store, t, { uniqueKey: 'k', uniqueUntil: 'started', delayMs: MINUTE })
      await held(store, t, 'k', first)
      await held(store, t + MINUTE, 'k', first)
      await claimAt(store, t + MINUTE, {}, first)
      const second = await free(store, t + MINUTE, 'k')
      assert.notEqual(second, first)
      assert.equal((await getExisting(store, first)).uniqueKey, 'k', 'the job keeps its key')
      // The second job holds the key until the purge, as a key without a mode does.
      await held(store, t + MINUTE, 'k', second)
    })

    test('a claim of several jobs frees the keys held until the start, and only those', async ({ store }) => {
      const t = Date.now()
      const [started, finished, purged] = await store.enqueue({
        jobs: [
          newJob({ uniqueKey: 'a', uniqueUntil: 'started' }),
          newJob({ uniqueKey: 'b', uniqueUntil: 'finished' }),
          newJob({ uniqueKey: 'c' }),
        ],
        now: t,
      })
      assert.equal((await claimAt(store, t)).length, 3)
      await free(store, t, 'a')
      await held(store, t, 'b', finished!.id)
      await held(store, t, 'c', purged!.id)
      assert.notEqual(started!.id, finished!.id)
    })

    deliveryTest(
      "'started' frees the key of a job handed to a waiting worker by its enqueue",
      async (h, waitForJobs) => {
        const peer = await h.openPeer()
        const { jobs } = await deliveredOnEnqueue(h, peer, waitForJobs, 1, {
          uniqueKey: 'k',
          uniqueUntil: 'started',
        })
        assert.equal(jobs.length, 1)
        await free(h.store, Date.now(), 'k')
      },
    )

    test("'started' frees the key of a job cancelled before it started", async ({ store }) => {
      const t = Date.now()
      const first = await enqueueJob(store, t, { uniqueKey: 'k', uniqueUntil: 'started', delayMs: HOUR })
      assert.equal(await store.cancel({ ids: [first], now: t }), 1)
      await free(store, t, 'k')
    })

    test("'finished' holds the key through the attempts of its job, and frees it when it completes", async ({
      store,
    }) => {
      const t = Date.now()
      const first = await enqueueJob(store, t, { uniqueKey: 'k', uniqueUntil: 'finished' })
      const [claimed] = await claimAt(store, t, {}, first)
      await held(store, t, 'k', first)
      const retry = {
        kind: 'retry' as const,
        id: first,
        leaseToken: claimed!.leaseToken,
        runAt: t + SECOND,
        error: { kind: 'error' as const, message: 'again' },
      }
      assert.deepEqual((await store.settle({ settlements: [retry], now: t })).settled, ['ok'])
      await held(store, t, 'k', first)
      const [again] = await claimAt(store, t + SECOND, {}, first)
      await held(store, t + SECOND, 'k', first)
      assert.deepEqual((await store.settle({ settlements: [completed(again)], now: t + SECOND })).settled, [
        'ok',
      ])
      await free(store, t + SECOND, 'k')
      assert.equal((await getExisting(store, first)).uniqueKey, 'k')
    })

    test("'finished' frees the key of a job that ends dead: failed, cancelled or out of its lease", async ({
      store,
    }) => {
      const t = Date.now()
      await finishNew(store, t, 'dead', { uniqueKey: 'failed', uniqueUntil: 'finished' })
      await free(store, t, 'failed')

      const active = await enqueueJob(store, t, { uniqueKey: 'cancelled', uniqueUntil: 'finished' })
      await claimAt(store, t, {}, active)
      assert.equal(await store.cancel({ ids: [active], now: t }), 1)
      await free(store, t, 'cancelled')

      const lost = await enqueueJob(store, t, { uniqueKey: 'lost', uniqueUntil: 'finished', maxAttempts: 1 })
      await claimAt(store, t, {}, lost)
      assert.deepEqual((await store.recoverExpired({ now: t + LEASE_MS })).dead, [lost])
      await free(store, t + LEASE_MS, 'lost')
    })

    test('a job whose key was freed does not take it back when it is retried', async ({ store }) => {
      const t = Date.now()
      const first = await finishNew(store, t, 'dead', { uniqueKey: 'k', uniqueUntil: 'finished' })
      const second = await free(store, t, 'k')
      assert.equal(await store.retry({ ids: [first], now: t }), 1)
      await held(store, t, 'k', second)
      // Nor when the other holder is gone: a freed key is free for good.
      assert.equal(await store.cancel({ ids: [second], now: t }), 1)
      assert.equal(await store.purge({ state: 'dead', now: t }), 1)
      await free(store, t, 'k')
    })

    test('a throttle holds the key for its window whatever becomes of the job, and not after it', async ({
      store,
    }) => {
      const t = Date.now()
      const first = await finishNew(store, t, 'completed', { uniqueKey: 'k', uniqueForMs: MINUTE })
      await held(store, t + MINUTE - 1, 'k', first)
      const second = await free(store, t + MINUTE, 'k')
      assert.equal((await getExisting(store, first)).uniqueKey, 'k')
      // A job still waiting lets go of the key at the end of its window too.
      const third = await enqueueJob(store, t + MINUTE, {
        uniqueKey: 't',
        uniqueForMs: SECOND,
        delayMs: HOUR,
      })
      await held(store, t + MINUTE + SECOND - 1, 't', third)
      const fourth = await free(store, t + MINUTE + SECOND, 't')
      assert.equal((await getExisting(store, third)).state, 'scheduled', 'the first job stays as it was')
      // The job that took the key holds it as its own options say: without a window, until the purge.
      await held(store, t + HOUR, 'k', second)
      await held(store, t + 2 * HOUR, 't', fourth)
    })

    test('a throttled key given twice in one batch, and twice after its window, gives one job each time', async ({
      store,
    }) => {
      const t = Date.now()
      const keyed = newJob({ uniqueKey: 'k', uniqueForMs: MINUTE })
      const first = await store.enqueue({ jobs: [keyed, keyed], now: t })
      assert.deepEqual(first[1], { id: first[0]!.id, created: false })
      const later = await store.enqueue({ jobs: [keyed, keyed], now: t + MINUTE })
      assert.equal(later[0]!.created, true)
      assert.deepEqual(later[1], { id: later[0]!.id, created: false })
    })

    test('concurrent enqueues of a key its holder has let go of give one job', async ({
      store,
      openPeer,
    }) => {
      const peers = [store, await openPeer(), await openPeer()]
      for (const overrides of [{ uniqueUntil: 'started' as const }, { uniqueForMs: SECOND }]) {
        const key = `k-${overrides.uniqueUntil ?? 'throttle'}`
        const t = Date.now()
        const first = await enqueueJob(store, t, { uniqueKey: key, ...overrides })
        await claimAt(store, t, {}, first)
        const later = t + SECOND
        const results = (
          await Promise.all(
            peers.flatMap((peer) =>
              [1, 2].map(() =>
                peer.enqueue({ jobs: [newJob({ uniqueKey: key, delayMs: HOUR, ...overrides })], now: later }),
              ),
            ),
          )
        ).flat()
        const created = results.filter((result) => result.created)
        assert.equal(created.length, 1, `one job created for ${key}`)
        for (const result of results) assert.equal(result.id, created[0]!.id)
        assert.notEqual(created[0]!.id, first)
      }
    })

    /** A debounced job as the client makes it: due debounceMs from its enqueue, its key freed when it starts. */
    const debounced = (payload: unknown, overrides: Partial<NewJob> = {}): NewJob =>
      newJob({
        uniqueKey: 'd',
        uniqueUntil: 'started',
        debounceMs: MINUTE,
        delayMs: MINUTE,
        payload: JSON.stringify(payload),
        ...overrides,
      })

    test('a debounced enqueue gives a job that has not started its payload and a new run time', async ({
      store,
    }) => {
      const t = Date.now()
      const [first] = await store.enqueue({ jobs: [debounced({ v: 1 })], now: t })
      assert.equal(first!.created, true)
      assert.equal((await getExisting(store, first!.id)).runAt, t + MINUTE)
      const [again] = await store.enqueue({ jobs: [debounced({ v: 2 })], now: t + SECOND })
      assert.deepEqual(again, { id: first!.id, created: false, debounced: true })
      const job = await getExisting(store, first!.id)
      assert.deepEqual([job.payload, job.runAt, job.state], [{ v: 2 }, t + SECOND + MINUTE, 'scheduled'])
      assert.equal((await store.listJobs()).jobs.length, 1)
      // Not due at the first run time any more: only at the last enqueue's.
      assert.deepEqual(await claimAt(store, t + MINUTE), [])
      await claimAt(store, t + SECOND + MINUTE, {}, first!.id)
    })

    test('a debounced key given twice in one batch gives one job, with the later payload', async ({
      store,
    }) => {
      const t = Date.now()
      const results = await store.enqueue({ jobs: [debounced({ v: 1 }), debounced({ v: 2 })], now: t })
      assert.equal(results[0]!.created, true)
      assert.deepEqual(results[1], { id: results[0]!.id, created: false, debounced: true })
      const job = await getExisting(store, results[0]!.id)
      assert.deepEqual([job.payload, job.runAt], [{ v: 2 }, t + MINUTE])
      await claimAt(store, t + MINUTE, {}, results[0]!.id)
    })

    test('a debounced job that has started is left as it is: its key is free, or held until it finishes', async ({
      store,
    }) => {
      const t = Date.now()
      const [first] = await store.enqueue({ jobs: [debounced({ v: 1 })], now: t })
      await claimAt(store, t + MINUTE, {}, first!.id)
      const [second] = await store.enqueue({ jobs: [debounced({ v: 2 })], now: t + MINUTE })
      assert.equal(second!.created, true, "'started': the key was freed when the first started")
      assert.deepEqual((await getExisting(store, first!.id)).payload, { v: 1 })

      const finished = { uniqueKey: 'f', uniqueUntil: 'finished' as const }
      const [held] = await store.enqueue({ jobs: [debounced({ v: 1 }, finished)], now: t })
      const [claimed] = await claimAt(store, t + MINUTE, { queues: ['default'], limit: 1 }, held!.id)
      const [during] = await store.enqueue({ jobs: [debounced({ v: 2 }, finished)], now: t + MINUTE })
      assert.deepEqual(
        during,
        { id: held!.id, created: false },
        "'finished': held while it runs, and not changed",
      )
      assert.deepEqual((await getExisting(store, held!.id)).payload, { v: 1 })
      assert.deepEqual((await store.settle({ settlements: [completed(claimed)], now: t + MINUTE })).settled, [
        'ok',
      ])
      const [after] = await store.enqueue({ jobs: [debounced({ v: 3 }, finished)], now: t + MINUTE })
      assert.equal(after!.created, true)
    })

    test('the client runs a debounced job debounceMs from its enqueue, and reports the job it debounced', async ({
      store,
    }) => {
      const client = createClient({ store })
      const first = await client.enqueue('n', { v: 1 }, { uniqueKey: 'k', debounceMs: HOUR })
      const job = await getExisting(store, first.id)
      assert.equal(job.runAt, job.createdAt + HOUR)
      const again = await client.enqueue('n', { v: 2 }, { uniqueKey: 'k', debounceMs: HOUR })
      assert.deepEqual(again, { id: first.id, created: false, debounced: true })
      assert.deepEqual((await getExisting(store, first.id)).payload, { v: 2 })
    })

    test('the client refuses a mode without a key or modes that cannot go together, and writes nothing', async ({
      store,
    }) => {
      const client = createClient({ store })
      const refusals: [object, string][] = [
        [{ uniqueUntil: 'started' }, 'uniqueUntil'],
        [{ uniqueForMs: SECOND }, 'uniqueForMs'],
        [{ debounceMs: SECOND }, 'debounceMs'],
        [{ uniqueKey: 'k', uniqueUntil: 'done' }, 'uniqueUntil'],
        [{ uniqueKey: 'k', uniqueForMs: 0 }, 'uniqueForMs'],
        [{ uniqueKey: 'k', uniqueForMs: SECOND, uniqueUntil: 'finished' }, 'uniqueForMs'],
        [{ uniqueKey: 'k', uniqueForMs: SECOND, debounceMs: SECOND }, 'uniqueForMs'],
        [{ uniqueKey: 'k', debounceMs: SECOND, uniqueUntil: 'purged' }, 'uniqueUntil'],
        [{ uniqueKey: 'k', debounceMs: SECOND, delayMs: SECOND }, 'debounceMs'],
        [{ uniqueKey: 'k', debounceMs: -1 }, 'debounceMs'],
      ]
      for (const [options, field] of refusals) {
        await assert.rejects(
          client.enqueue('n', {}, options as never),
          (error: unknown) => error instanceof ValidationError && error.field === field,
          JSON.stringify(options),
        )
      }
      assert.deepEqual((await store.listJobs()).jobs, [])
    })
  })
}
