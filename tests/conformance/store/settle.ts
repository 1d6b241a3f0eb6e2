/**
 * What settle promises: every outcome, fenced by the lease token, and settle with a claim.
 * One area of the Store conformance suite (tests/conformance/store.case.ts runs them all).
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import { FerryError } from '../../../src/core/errors.js'
import type { ClaimedJob, JobError } from '../../../src/core/job.js'
import type { Settlement } from '../../../src/core/outcome.js'
import { getJob } from '../../support/store-calls.js'
import {
  SECOND,
  MINUTE,
  HOUR,
  LEASE_MS,
  UNKNOWN_ID,
  enqueueJobs,
  enqueueJob,
  claimAt,
  renewAt,
  completed,
  getExisting,
  view,
  ids,
  one,
  type ConformanceCases,
} from './kit.js'

export function settleCases({ test }: ConformanceCases): void {
  describe('settle', () => {
    test('completes a job, storing its result and finish time and ending its lease', async ({ store }) => {
      const t = Date.now()
      await enqueueJob(store, t)
      const job = one(await claimAt(store, t + 1))
      const result = { ok: true, items: [1, 2, { three: null }] }
      assert.deepEqual((await store.settle({ settlements: [completed(job, result)], now: t + 2 })).settled, [
        'ok',
      ])
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

    test('returns per-item results in input order for a batch of kept and lost leases', async ({ store }) => {
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
      assert.deepEqual((await store.settle({ settlements: [completed(job, 'first')], now: t + 1 })).settled, [
        'ok',
      ])
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
      assert.deepEqual(recovered, { retried: [stale.id], dead: [], clamped: 0, expired: [] })
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
}
