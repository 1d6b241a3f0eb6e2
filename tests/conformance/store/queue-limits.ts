/**
 * What a queue's limits beyond its concurrency promise: rate limits of the queue and of each group
 * (a sliding window of starts), concurrency per group, and fairness between groups (claims rotate
 * between the groups with ready jobs), all decided inside the claim. One area of the Store
 * conformance suite (tests/conformance/store.case.ts runs them all).
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import type { ClaimedJob } from '../../../src/core/job.js'
import { ValidationError } from '../../../src/core/errors.js'
import type { ControlParams, QueueLimits, Store } from '../../../src/store/store.js'
import { within } from '../../support/async.js'
import { waitReason } from '../../support/store-calls.js'
import {
  SECOND,
  MINUTE,
  LEASE_MS,
  enqueueJobs,
  claimAt,
  completed,
  deliveredOnEnqueue,
  ids,
  type ConformanceCases,
} from './kit.js'

const NO_LIMITS: QueueLimits = { concurrency: null, rate: null, groupConcurrency: null, groupRate: null }

async function limitsOf(store: Store, queue: string): Promise<QueueLimits | undefined> {
  return (await store.control()).queues.find((entry) => entry.queue === queue)?.limits
}

/** The groups of claimed jobs, in claim order ('-' for a job without one). */
function groupsOf(jobs: readonly ClaimedJob[]): string[] {
  return jobs.map((job) => job.group ?? '-')
}

/** Claims one job at a time, `count` times, each at `now`, completing each before the next. */
async function claimOneByOne(store: Store, now: number, count: number): Promise<ClaimedJob[]> {
  const claimed: ClaimedJob[] = []
  for (let i = 0; i < count; i++) {
    const [job] = await claimAt(store, now, { limit: 1 })
    if (job === undefined) break
    claimed.push(job)
    await store.settle({ settlements: [completed(job)], now })
  }
  return claimed
}

export function queueLimitsCases({ test, deliveryTest }: ConformanceCases): void {
  describe('queue limits: the record', () => {
    test('keeps each limit until changed, removed with null, or all cleared', async ({ store }) => {
      const record = await store.control({
        limit: { queue: 'api', rate: { limit: 10, perMs: SECOND }, groupConcurrency: 2 },
      })
      const set: QueueLimits = { ...NO_LIMITS, rate: { limit: 10, perMs: SECOND }, groupConcurrency: 2 }
      assert.deepEqual(record.queues, [
        {
          queue: 'api',
          paused: null,
          limits: set,
          retention: { completedMs: null, deadMs: null, completedCount: null, deadCount: null },
        },
      ])
      await store.control({ limit: { queue: 'api', groupRate: { limit: 1, perMs: MINUTE }, concurrency: 5 } })
      assert.deepEqual(await limitsOf(store, 'api'), {
        concurrency: 5,
        rate: { limit: 10, perMs: SECOND },
        groupConcurrency: 2,
        groupRate: { limit: 1, perMs: MINUTE },
      })
      await store.control({ limit: { queue: 'api', rate: null, groupConcurrency: null } })
      assert.deepEqual(await limitsOf(store, 'api'), {
        ...NO_LIMITS,
        concurrency: 5,
        groupRate: { limit: 1, perMs: MINUTE },
      })
      await store.control({ limit: { queue: 'api', clear: true } })
      assert.equal(await limitsOf(store, 'api'), undefined, 'a queue left without settings is not listed')
    })

    test('refuses a bad limit with a ValidationError naming the field, and changes nothing', async ({
      store,
    }) => {
      await store.control({ limit: { queue: 'kept', rate: { limit: 3, perMs: SECOND } } })
      const before = await store.control()
      const refused = async (params: ControlParams, field: string): Promise<void> => {
        await assert.rejects(
          store.control(params),
          (error: unknown) => error instanceof ValidationError && error.field === field,
          `refused on ${field}`,
        )
      }
      await refused({ limit: { queue: 'q', rate: { limit: 0, perMs: SECOND } } }, 'limit.rate.limit')
      await refused({ limit: { queue: 'q', rate: { limit: 1, perMs: 0 } } }, 'limit.rate.perMs')
      await refused({ limit: { queue: 'q', rate: { limit: 1, perMs: 86_400_001 } } }, 'limit.rate.perMs')
      await refused({ limit: { queue: 'q', rate: 5 as never } }, 'limit.rate')
      await refused({ limit: { queue: 'q', rate: { limit: 1, per: 5 } as never } }, 'limit.rate.per')
      await refused({ limit: { queue: 'q', groupRate: { limit: 2.5, perMs: 10 } } }, 'limit.groupRate.limit')
      await refused({ limit: { queue: 'q', groupConcurrency: 0 } }, 'limit.groupConcurrency')
      await refused({ limit: { queue: 'q', clear: true, groupRate: null } as never }, 'limit.groupRate')
      assert.deepEqual(await store.control(), before, 'nothing changed')
    })
  })

  describe('queue limits: rate', () => {
    test('starts at most the limit in any sliding window of the queue', async ({ store }) => {
      const t = Date.now()
      const jobs = await enqueueJobs(
        store,
        t,
        Array.from({ length: 10 }, () => ({})),
      )
      await store.control({ limit: { queue: 'default', rate: { limit: 3, perMs: SECOND } } })
      assert.deepEqual(ids(await claimAt(store, t, { limit: 2 })), jobs.slice(0, 2))
      assert.deepEqual(ids(await claimAt(store, t + 400)), jobs.slice(2, 3), 'one left in the window')
      assert.deepEqual(await claimAt(store, t + 999), [], 'the window is full')
      // The two starts at t leave the window at t + 1000; the one at t + 400 still counts.
      assert.deepEqual(ids(await claimAt(store, t + 1000)), jobs.slice(3, 5))
      assert.deepEqual(ids(await claimAt(store, t + 1400)), jobs.slice(5, 6))
    })

    test('counts starts, not running jobs: finishing a job frees no start', async ({ store }) => {
      const t = Date.now()
      await enqueueJobs(store, t, [{}, {}])
      await store.control({ limit: { queue: 'default', rate: { limit: 1, perMs: MINUTE } } })
      const [job] = await claimAt(store, t)
      await store.settle({ settlements: [completed(job)], now: t })
      assert.deepEqual(await claimAt(store, t + SECOND), [])
      assert.equal((await claimAt(store, t + MINUTE)).length, 1)
    })

    test('a queue at its rate falls through to the next queue of the list', async ({ store }) => {
      const t = Date.now()
      const [h1, , l1] = await enqueueJobs(store, t, [{ queue: 'high' }, { queue: 'high' }, { queue: 'low' }])
      await store.control({ limit: { queue: 'high', rate: { limit: 1, perMs: MINUTE } } })
      assert.deepEqual(ids(await claimAt(store, t, { queues: ['high', 'low'] })), [h1, l1])
    })

    test('the claim a settlement carries counts against the rate', async ({ store }) => {
      const t = Date.now()
      await enqueueJobs(store, t, [{}, {}, {}])
      await store.control({ limit: { queue: 'default', rate: { limit: 2, perMs: MINUTE } } })
      const [job] = await claimAt(store, t, { limit: 1 })
      const { claimed } = await store.settle({
        settlements: [completed(job)],
        claim: { queues: ['default'], limit: 10, leaseMs: LEASE_MS, workerId: 'worker-1' },
        now: t,
      })
      assert.equal(claimed.length, 1)
      assert.deepEqual(await claimAt(store, t), [])
    })

    test('a worker waiting on a queue at its rate wakes when the window lets the next job start', async ({
      store,
    }) => {
      await enqueueJobs(store, Date.now(), [{}, {}])
      await store.control({ limit: { queue: 'default', rate: { limit: 1, perMs: 300 } } })
      assert.equal(
        (await store.claim({ queues: ['default'], limit: 5, leaseMs: LEASE_MS, workerId: 'w' })).length,
        1,
      )
      assert.deepEqual(
        await store.claim({ queues: ['default'], limit: 5, leaseMs: LEASE_MS, workerId: 'w' }),
        [],
      )
      const woken = await within(
        3 * SECOND,
        'waitForWork',
        waitReason(store, { queues: ['default'], timeoutMs: 5 * SECOND }),
      )
      assert.equal(woken, 'due', 'a timer set by the claim, not a poll or the timeout')
      const late = await store.claim({ queues: ['default'], limit: 5, leaseMs: LEASE_MS, workerId: 'w' })
      assert.equal(late.length, 1)
    })

    test('a worker whose own claim filled the window wakes when it opens, for the queue or a group', async ({
      store,
    }) => {
      const claim = (): Promise<ClaimedJob[]> =>
        store.claim({ queues: ['default'], limit: 5, leaseMs: LEASE_MS, workerId: 'w' })
      const waitDue = (): Promise<string> =>
        within(3 * SECOND, 'waitForWork', waitReason(store, { queues: ['default'], timeoutMs: 5 * SECOND }))
      await enqueueJobs(store, Date.now(), [{}, {}, {}])
      await store.control({ limit: { queue: 'default', rate: { limit: 2, perMs: 300 } } })
      assert.equal((await claim()).length, 2, 'the claim that fills the window')
      assert.equal(await waitDue(), 'due', 'woken by the window it filled, with no claim in between')
      assert.equal((await claim()).length, 1)

      await store.control({ limit: { queue: 'default', clear: true } })
      await enqueueJobs(store, Date.now(), [{ group: 'g' }, { group: 'g' }])
      await store.control({ limit: { queue: 'default', groupRate: { limit: 1, perMs: 300 } } })
      assert.equal((await claim()).length, 1, "the claim that fills the group's window")
      assert.equal(await waitDue(), 'due')
      assert.equal((await claim()).length, 1)
    })

    deliveryTest('an enqueue hands a waiter no more starts than the rate allows', async (h, waitForJobs) => {
      const peer = await h.openPeer()
      await h.store.control({ limit: { queue: 'default', rate: { limit: 2, perMs: MINUTE } } })
      const wake = await deliveredOnEnqueue(h, peer, waitForJobs, 4)
      assert.equal(wake.jobs.length, 2, 'two starts in the window')
      assert.deepEqual(await claimAt(h.store, Date.now(), { workerId: 'other' }), [])
    })
  })

  describe('queue limits: groups', () => {
    test('holds each group to its concurrency; jobs without a group only to the queue', async ({ store }) => {
      const t = Date.now()
      const [a1, a2, b1, , u1, u2] = await enqueueJobs(store, t, [
        { group: 'a' },
        { group: 'a' },
        { group: 'b' },
        { group: 'b' },
        {},
        {},
      ])
      await store.control({ limit: { queue: 'default', groupConcurrency: 1 } })
      const first = await claimAt(store, t, { limit: 10 })
      assert.deepEqual(new Set(ids(first)), new Set([a1, b1, u1, u2]))
      assert.deepEqual(await claimAt(store, t), [], 'both groups at their limit')
      const a = first.find((job) => job.id === a1)
      await store.settle({ settlements: [completed(a)], now: t })
      assert.deepEqual(ids(await claimAt(store, t)), [a2])
    })

    test("a group's lease that ran out no longer counts", async ({ store }) => {
      const t = Date.now()
      const [, a2] = await enqueueJobs(store, t, [{ group: 'a' }, { group: 'a' }])
      await store.control({ limit: { queue: 'default', groupConcurrency: 1 } })
      assert.equal((await claimAt(store, t, { limit: 5 })).length, 1)
      assert.deepEqual(ids(await claimAt(store, t + LEASE_MS + 1)), [a2])
    })

    test('holds each group to its rate, in a sliding window of its own starts', async ({ store }) => {
      const t = Date.now()
      const [a1, a2, b1, a3] = await enqueueJobs(store, t, [
        { group: 'a' },
        { group: 'a' },
        { group: 'b' },
        { group: 'a' },
      ])
      await store.control({ limit: { queue: 'default', groupRate: { limit: 2, perMs: MINUTE } } })
      assert.deepEqual(new Set(ids(await claimAt(store, t, { limit: 10 }))), new Set([a1, a2, b1]))
      assert.deepEqual(await claimAt(store, t + SECOND), [])
      assert.deepEqual(ids(await claimAt(store, t + MINUTE)), [a3])
    })

    test('a group limit and the queue limits hold together', async ({ store }) => {
      const t = Date.now()
      await enqueueJobs(store, t, [
        { group: 'a' },
        { group: 'a' },
        { group: 'b' },
        { group: 'b' },
        { group: 'c' },
      ])
      await store.control({ limit: { queue: 'default', groupConcurrency: 1, concurrency: 2 } })
      const claimed = await claimAt(store, t, { limit: 10 })
      assert.equal(claimed.length, 2, 'the queue allows two')
      assert.equal(new Set(groupsOf(claimed)).size, 2, 'one of each of two groups')
    })
  })

  describe('queue limits: fairness between groups', () => {
    test('one group with many jobs does not hold back a group with one', async ({ store }) => {
      const t = Date.now()
      await enqueueJobs(
        store,
        t,
        Array.from({ length: 30 }, () => ({ group: 'big' })),
      )
      const [small] = await enqueueJobs(store, t, [{ group: 'small' }])
      const claimed = await claimOneByOne(store, t, 2)
      assert.ok(
        ids(claimed).includes(small!),
        `the small group's job within two claims: ${groupsOf(claimed)}`,
      )
    })

    test('claims rotate between the groups with ready jobs', async ({ store }) => {
      const t = Date.now()
      await enqueueJobs(
        store,
        t,
        ['a', 'a', 'a', 'b', 'b', 'b', 'c', 'c', 'c'].map((group) => ({ group })),
      )
      const groups = groupsOf(await claimOneByOne(store, t, 9))
      assert.equal(groups.length, 9)
      for (let i = 0; i + 3 < groups.length; i++) {
        assert.equal(groups[i], groups[i + 3], `a round robin: ${groups.join(' ')}`)
      }
      assert.equal(new Set(groups.slice(0, 3)).size, 3, `every group in each round: ${groups.join(' ')}`)
    })

    test('jobs without a group take their turn as one group', async ({ store }) => {
      const t = Date.now()
      await enqueueJobs(
        store,
        t,
        Array.from({ length: 10 }, () => ({})),
      )
      const [grouped] = await enqueueJobs(store, t, [{ group: 'g' }])
      const claimed = await claimOneByOne(store, t, 2)
      assert.ok(ids(claimed).includes(grouped!), `the group's job within two claims: ${groupsOf(claimed)}`)
    })

    test('a claim of several jobs takes them round the groups', async ({ store }) => {
      const t = Date.now()
      await enqueueJobs(
        store,
        t,
        Array.from({ length: 6 }, () => ({ group: 'big' })),
      )
      const [small] = await enqueueJobs(store, t, [{ group: 'small' }])
      const claimed = await claimAt(store, t, { limit: 3 })
      assert.equal(claimed.length, 3)
      assert.ok(ids(claimed).includes(small!), `the small group's job in the batch: ${groupsOf(claimed)}`)
    })

    test('within a group, priority, then run time, then id', async ({ store }) => {
      const t = Date.now()
      const [low, high, other] = await enqueueJobs(store, t, [
        { group: 'a', priority: 0 },
        { group: 'a', priority: 5 },
        { group: 'b' },
      ])
      const claimed = await claimOneByOne(store, t, 3)
      assert.deepEqual(
        ids(claimed).filter((id) => id !== other),
        [high, low],
      )
    })

    test('a claim for some names rotates among the groups with jobs of those names', async ({ store }) => {
      const t = Date.now()
      const [, a2, , b2] = await enqueueJobs(store, t, [
        { group: 'a', name: 'skip' },
        { group: 'a', name: 'take' },
        { group: 'b', name: 'skip' },
        { group: 'b', name: 'take' },
      ])
      const claimed = await claimAt(store, t, { names: ['take'], limit: 10 })
      assert.deepEqual(new Set(ids(claimed)), new Set([a2, b2]))
    })

    test('a group at its limit gives its turn to the next group', async ({ store }) => {
      const t = Date.now()
      await enqueueJobs(store, t, [{ group: 'a' }, { group: 'a' }, { group: 'a' }])
      const [b1, b2] = await enqueueJobs(store, t, [{ group: 'b' }, { group: 'b' }])
      await store.control({ limit: { queue: 'default', groupConcurrency: 1 } })
      const [a] = await claimAt(store, t, { limit: 1 })
      assert.equal(a?.group, 'a')
      assert.deepEqual(ids(await claimAt(store, t, { limit: 1 })), [b1])
      assert.deepEqual(await claimAt(store, t, { limit: 1 }), [], 'both at their limit')
      assert.ok(b2)
    })
  })
}
