/**
 * What a store's life promises: migrate, and close.
 * One area of the Store conformance suite (tests/conformance/store.case.ts runs them all).
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import { FerryError } from '../../../src/core/errors.js'
import { newJob } from '../../support/store-harness.js'
import { within } from '../../support/async.js'
import { getJob, waitReason } from '../../support/store-calls.js'
import {
  SECOND,
  HOUR,
  enqueueJob,
  claimAt,
  renewAt,
  completed,
  getExisting,
  one,
  settledHandleCounts,
  handleCounts,
  type ConformanceCases,
} from './kit.js'

export function lifecycleCases({ test, bare, createHarness }: ConformanceCases): void {
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
}
