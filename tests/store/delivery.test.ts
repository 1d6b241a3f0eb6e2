/**
 * The kernel's delivery (src/store/kernel/delivery.ts) on its own, against the real PostgreSQL and
 * Redis stores: the jobs handed over are really claimed from a store and given back to it, while
 * the test decides when each delivery arrives, which is the race the kernel settles: a delivery
 * that comes while its waiter waits, after its wait ended, twice, or as the store closes. The
 * stores' own registration and messages are the conformance suite's and each store's tests'.
 */
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'

import type { ClaimedJob } from '../../src/core/job.js'
import { Deliveries, type DeliveryBackend, type DeliveryWaiter } from '../../src/store/kernel/delivery.js'
import { DELIVERY_LEASE_MS, type Store } from '../../src/store/store.js'
import { WakeHub } from '../../src/store/wake-hub.js'
import { postgresUnreachableReason, tempSchema } from '../support/postgres-harness.js'
import { within } from '../support/async.js'
import { redisUnreachableReason, tempNamespace } from '../support/redis-harness.js'
import { skipUnlessAvailable } from '../support/services.js'
import { newJob } from '../support/store-harness.js'
import { getJob } from '../support/store-calls.js'

const CLAIM = { limit: 10, leaseMs: 60_000, workerId: 'w' }

/** A backend over a real store: what the kernel asked of it is recorded. */
interface TestBackend extends DeliveryBackend {
  closed: boolean
  watched: DeliveryWaiter[]
  unregistered: string[]
  /** Jobs claimed as an enqueue would for a waiter, by id: what readDelivered reads. */
  claimed: Map<string, ClaimedJob>
}

function backendOf(store: Store, waitsForWatch = false): TestBackend {
  const backend: TestBackend = {
    closed: false,
    waitsForWatch,
    watched: [],
    unregistered: [],
    claimed: new Map(),
    watch: async (_queues, _names, waiter) => {
      if (waiter !== null) backend.watched.push(waiter)
      return waiter !== null
    },
    unregister: async (ids) => backend.unregistered.push(...ids),
    readDelivered: async (ids) => {
      const { jobs } = await store.listJobs({ ids })
      return jobs.filter((job) => job.state === 'active').map((job) => backend.claimed.get(job.id)!)
    },
    giveBack: (settlements) => store.settle({ settlements }),
  }
  return backend
}

/** Enqueues `count` jobs and claims them as a delivery to CLAIM's worker would (its short lease). */
async function deliveredJobs(store: Store, backend: TestBackend, count = 1): Promise<ClaimedJob[]> {
  await store.enqueue({ jobs: Array.from({ length: count }, () => newJob()) })
  const jobs = await store.claim({
    queues: ['default'],
    limit: count,
    leaseMs: Math.min(CLAIM.leaseMs, DELIVERY_LEASE_MS),
    workerId: CLAIM.workerId,
  })
  for (const job of jobs) backend.claimed.set(job.id, job)
  return jobs
}

async function assertGivenBack(
  store: Store,
  deliveries: Deliveries,
  jobs: readonly ClaimedJob[],
): Promise<void> {
  await within(2000, 'the give-back', deliveries.givenBack())
  for (const { id } of jobs) {
    const job = await getJob(store, id)
    assert.equal(job?.state, 'ready', 'given back')
    assert.equal(job.attempts, 0, 'attempt unused')
  }
}

function deliveryCases(
  name: string,
  skip: string | null,
  openStore: (t: TestContext) => Promise<Store>,
): void {
  describe(`delivery on ${name}`, skipUnlessAvailable(skip), () => {
    async function setUp(t: TestContext, waitsForWatch = false) {
      const store = await openStore(t)
      const backend = backendOf(store, waitsForWatch)
      const hub = new WakeHub()
      return { store, backend, hub, deliveries: new Deliveries(hub, backend, 'test') }
    }

    it('hands a delivery to its waiter while it waits, and leaves its registration (used up) alone', async (t) => {
      const { store, backend, deliveries } = await setUp(t)
      const waiting = deliveries.wait({ queues: ['default'], timeoutMs: 5000, claim: CLAIM })
      const jobs = await deliveredJobs(store, backend)
      deliveries.deliver({ waiterId: backend.watched[0]!.id, jobs })
      const wake = await within(1000, 'the wait', waiting)
      assert.equal(wake.reason, 'delivered')
      assert.deepEqual(
        wake.jobs.map((job) => job.id),
        jobs.map((job) => job.id),
      )
      assert.deepEqual(backend.unregistered, [])
    })

    it('gives back, attempt unused, jobs delivered to a wait that ended, and takes out its registration', async (t) => {
      const { store, backend, deliveries } = await setUp(t)
      assert.deepEqual(await deliveries.wait({ queues: ['default'], timeoutMs: 10, claim: CLAIM }), {
        reason: 'timeout',
        jobs: [],
      })
      const [ended] = backend.watched
      await new Promise((resolve) => setImmediate(resolve))
      assert.deepEqual(backend.unregistered, [ended!.id])
      const jobs = await deliveredJobs(store, backend, 2)
      deliveries.deliver({ waiterId: ended!.id, jobs })
      await assertGivenBack(store, deliveries, jobs)
    })

    it("hands jobs delivered to an ended wait to the same worker's next wait, whose registration then goes", async (t) => {
      const { store, backend, deliveries } = await setUp(t)
      await deliveries.wait({ queues: ['default'], timeoutMs: 10, claim: CLAIM })
      const next = deliveries.wait({ queues: ['other', 'default'], timeoutMs: 5000, claim: CLAIM })
      const [ended, waiting] = backend.watched
      const jobs = await deliveredJobs(store, backend)
      deliveries.deliver({ waiterId: ended!.id, jobs })
      const wake = await within(1000, 'the next wait', next)
      assert.equal(wake.reason, 'delivered')
      assert.deepEqual(
        wake.jobs.map((job) => job.id),
        jobs.map((job) => job.id),
      )
      await new Promise((resolve) => setImmediate(resolve))
      assert.deepEqual(backend.unregistered, [ended!.id, waiting!.id])
    })

    it("gives back jobs for another worker's wait, or one with too little room for them", async (t) => {
      const { store, backend, deliveries } = await setUp(t)
      await deliveries.wait({ queues: ['default'], timeoutMs: 10, claim: CLAIM })
      const controller = new AbortController()
      const other = deliveries.wait({
        queues: ['default'],
        signal: controller.signal,
        claim: { ...CLAIM, workerId: 'x' },
      })
      const small = deliveries.wait({
        queues: ['default'],
        signal: controller.signal,
        claim: { ...CLAIM, limit: 1 },
      })
      const jobs = await deliveredJobs(store, backend, 2)
      deliveries.deliver({ waiterId: backend.watched[0]!.id, jobs })
      await assertGivenBack(store, deliveries, jobs)
      controller.abort()
      assert.deepEqual(await Promise.all([other, small]), [
        { reason: 'aborted', jobs: [] },
        { reason: 'aborted', jobs: [] },
      ])
    })

    it('takes one delivery per wait: a second one to it goes back in line', async (t) => {
      const { store, backend, deliveries } = await setUp(t)
      const waiting = deliveries.wait({ queues: ['default'], timeoutMs: 5000, claim: CLAIM })
      const first = await deliveredJobs(store, backend)
      const second = await deliveredJobs(store, backend)
      deliveries.deliver({ waiterId: backend.watched[0]!.id, jobs: first })
      deliveries.deliver({ waiterId: backend.watched[0]!.id, jobs: second })
      const wake = await within(1000, 'the wait', waiting)
      assert.deepEqual(
        wake.jobs.map((job) => job.id),
        first.map((job) => job.id),
      )
      await assertGivenBack(store, deliveries, second)
    })

    it('gives back a delivery that arrives as the store closes, and the wait ends aborted', async (t) => {
      const { store, backend, deliveries } = await setUp(t)
      const waiting = deliveries.wait({ queues: ['default'], timeoutMs: 5000, claim: CLAIM })
      const jobs = await deliveredJobs(store, backend)
      deliveries.deliver({ waiterId: backend.watched[0]!.id, jobs })
      backend.closed = true
      assert.deepEqual(await within(1000, 'the wait', waiting), { reason: 'aborted', jobs: [] })
      await assertGivenBack(store, deliveries, jobs)
    })

    it('reads a delivery that carried only ids, leaving out a job that is no longer active', async (t) => {
      const { store, backend, deliveries } = await setUp(t)
      const waiting = deliveries.wait({ queues: ['default'], timeoutMs: 5000, claim: CLAIM })
      const jobs = await deliveredJobs(store, backend, 2)
      assert.equal(await store.cancel({ ids: [jobs[1]!.id] }), 1)
      deliveries.deliver({ waiterId: backend.watched[0]!.id, ids: jobs.map((job) => job.id) })
      const wake = await within(1000, 'the wait', waiting)
      assert.equal(wake.reason, 'delivered')
      assert.deepEqual(
        wake.jobs.map((job) => job.id),
        [jobs[0]!.id],
      )
    })

    it('ends a wait with its watch error when the backend waits for its watch, and not otherwise', async (t) => {
      const { backend, hub, deliveries } = await setUp(t, true)
      const lost = new Error('the namespace is gone')
      let failWatch = (): void => {}
      backend.watch = () => new Promise((_, reject) => (failWatch = () => reject(lost)))
      const waiting = deliveries.wait({ queues: ['default'], timeoutMs: 5000 })
      // Its wake-up comes before the watch's answer, as a script's wake-up precedes its reply.
      hub.broadcast('notified')
      failWatch()
      await assert.rejects(waiting, lost)
      const { deliveries: notWaiting, backend: other } = await setUp(t, false)
      other.watch = () => new Promise(() => {})
      assert.deepEqual(await notWaiting.wait({ queues: ['default'], timeoutMs: 10 }), {
        reason: 'timeout',
        jobs: [],
      })
    })
  })
}

deliveryCases('PostgreSQL', await postgresUnreachableReason(), (t) => tempSchema(t).open())
deliveryCases(
  'Redis',
  await redisUnreachableReason(),
  async (t) => (await tempNamespace(t, 'kernel-delivery')).store,
)
