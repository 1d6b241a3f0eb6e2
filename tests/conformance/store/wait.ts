/**
 * What waitForWork promises: waking, timing out, and delivering jobs to a waiter.
 * One area of the Store conformance suite (tests/conformance/store.case.ts runs them all).
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import type { ClaimedJob } from '../../../src/core/job.js'
import { DELIVERY_LEASE_MS } from '../../../src/store/store.js'
import { newJob } from '../../support/store-harness.js'
import { within } from '../../support/async.js'
import { waitReason } from '../../support/store-calls.js'
import {
  SECOND,
  HOUR,
  LEASE_MS,
  enqueueJobs,
  enqueueJob,
  claimAt,
  renewAt,
  completed,
  getExisting,
  view,
  ids,
  type ConformanceCases,
} from './kit.js'

export function waitCases({ test, deliveryTest }: ConformanceCases): void {
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
            assert.equal(job.leaseExpiresAt, before + DELIVERY_LEASE_MS, 'a delivery lease from the enqueue')
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
            expired: [],
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
      // The bounds only keep a hung wait from hanging the test: on a loaded machine a Redis Cluster
      // waiter's goodbye (wait-for-work-end) took over a second.
      assert.deepEqual(await within(5 * SECOND, 'waitForJobs', aborted), { reason: 'aborted', jobs: [] })
      assert.deepEqual(await within(5 * SECOND, 'waitForJobs', timedOut), { reason: 'timeout', jobs: [] })
      // A closed store's waiter is gone too, whether or not it could say so.
      const closing = await h.openPeer()
      const closed = closing.waitForWork({ queues: ['default'], timeoutMs: 5 * SECOND, claim })
      await new Promise((resolve) => setTimeout(resolve, 100))
      await closing.close()
      assert.deepEqual(await within(5 * SECOND, 'waitForJobs', closed), { reason: 'aborted', jobs: [] })
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
            expired: [],
          })
          assert.deepEqual(await h.store.recoverExpired({ now: before + DELIVERY_LEASE_MS }), {
            retried: [id],
            dead: [],
            clamped: 0,
            expired: [],
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
}
