/**
 * Queue control across real processes, on every store: `ferry work` processes share a queue's
 * concurrency limit and obey a pause from the moment it commits, through restarts. The store is
 * sampled from this process, independently of the workers.
 */
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'

import { createClient, type JobSpec } from '../../src/index.js'
import type { Store } from '../../src/store/store.js'
import type { ScriptPayload } from '../support/handlers/scripted.js'
import { freshStore, STORES, urlOf } from '../support/stores.js'
import { waitFor } from '../support/async.js'
import { runFerry, spawnFerry, WORKER_STARTED, type FerryProcess } from '../support/processes.js'
import { allJobs } from '../support/store-harness.js'
import { fixtureHandlers } from '../support/workers.js'

const PROCESSES = 4
/** How long the rate test runs. */
const RATE_RUN_S = 60
/** The workers' lease (`ferry work --lease`): a claim's time is its lease's end less this. */
const LEASE_MS = 30_000

/** `count` jobs of the scripted handler, each sleeping `sleepMs` before it completes. */
function scriptJobs(count: number, sleepMs: number): JobSpec[] {
  const payload: ScriptPayload = { steps: [{ sleepMs, result: 'done' }] }
  return Array.from({ length: count }, () => ({ name: 'script', payload }))
}

/** `count` jobs that return when they started and their lease (stampStart), in `group` if given. */
function stampedJobs(count: number, group?: string): JobSpec[] {
  const payload: ScriptPayload = { steps: [{ stampStart: true }] }
  return Array.from({ length: count }, () => ({
    name: 'script',
    payload,
    ...(group === undefined ? {} : { options: { group } }),
  }))
}

interface Stamped {
  id: string
  /** When its handler began, by the worker's clock. */
  startedAt: number
  /** When it was claimed, by the store's clock: its lease as its handler saw it, less the lease. */
  claimedAt: number
}

/** When each completed stamped job started, earliest first. */
async function startTimes(store: Store): Promise<Stamped[]> {
  return (await allJobs(store))
    .filter((job) => job.state === 'completed')
    .map((job) => {
      const { startedAt, leaseExpiresAt } = job.result as { startedAt: number; leaseExpiresAt: number }
      return { id: job.id, startedAt, claimedAt: leaseExpiresAt - LEASE_MS }
    })
    .sort((a, b) => a.startedAt - b.startedAt)
}

/** Starts `ferry work` processes on the store's default queue and waits until each has started. */
async function startWorkers(
  t: TestContext,
  url: string,
  concurrency: number,
  extra: readonly string[] = [],
): Promise<FerryProcess[]> {
  const workers = Array.from({ length: PROCESSES }, () =>
    spawnFerry(t, [
      '--store',
      url,
      'work',
      '--handlers',
      fixtureHandlers('scripted.ts'),
      '--concurrency',
      String(concurrency),
      ...extra,
    ]),
  )
  await Promise.all(workers.map((worker) => worker.waitForOutput(WORKER_STARTED, 30_000)))
  return workers
}

/** Jobs holding a live lease now, as the store lists them. */
async function liveLeases(store: Store): Promise<number> {
  const now = Date.now()
  const { jobs } = await store.listJobs({ state: 'active', limit: 1000 })
  return jobs.filter((job) => job.leaseExpiresAt !== null && job.leaseExpiresAt > now).length
}

for (const store of STORES) {
  describe(
    `queue control across ${PROCESSES} worker processes on ${store.name}`,
    { skip: store.skip },
    () => {
      it('a concurrency limit of 5 holds for 4 processes of concurrency 50', async (t) => {
        const harness = await freshStore(t, store)
        await harness.store.control({ limit: { queue: 'default', concurrency: 5 } })
        const client = createClient({ store: harness.store })
        const ids = (await client.enqueueMany(scriptJobs(100, 100))).map(({ id }) => id)
        await startWorkers(t, urlOf(harness), 50)

        let most = 0
        await waitFor(
          async () => {
            most = Math.max(most, await liveLeases(harness.store))
            const stats = await harness.store.stats()
            return stats.find((entry) => entry.queue === 'default')?.completed === ids.length
          },
          60_000,
          'every job completed',
          5,
        )
        assert.ok(most <= 5, `the sampler saw ${most} live leases at once (limit 5)`)
        // Seeing 5 also shows the sampler watched the run while it was full, however often it looked.
        assert.equal(most, 5, 'the limit was used, not undershot')
      })

      it('a pause holds for workers blocked waiting, through a restart of every process, until resumed', async (t) => {
        const harness = await freshStore(t, store)
        const url = urlOf(harness)
        let workers = await startWorkers(t, url, 10)
        // Blocked waiting on an empty queue; the pause commits, then jobs arrive.
        assert.equal((await runFerry(t, ['--store', url, 'pause', 'default', '--reason', 'test'])).code, 0)
        const client = createClient({ store: harness.store })
        const ids = (await client.enqueueMany(scriptJobs(20, 0))).map(({ id }) => id)
        const untouched = async (): Promise<void> => {
          for (const job of await allJobs(harness.store)) {
            assert.equal(job.state, 'ready', `job ${job.id} is still ready`)
            assert.equal(job.attempts, 0, `job ${job.id} was never handed out`)
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 1500))
        await untouched()

        // Every process restarted: the pause is the store's, not theirs.
        for (const worker of workers) worker.child.kill('SIGKILL')
        await Promise.all(workers.map((worker) => worker.waitForExit(10_000)))
        workers = await startWorkers(t, url, 10)
        await new Promise((resolve) => setTimeout(resolve, 1500))
        await untouched()

        assert.equal((await runFerry(t, ['--store', url, 'resume', 'default'])).code, 0)
        await waitFor(
          async () => (await allJobs(harness.store)).every((job) => job.state === 'completed'),
          20_000,
          'every job completed once resumed',
        )
        assert.equal((await allJobs(harness.store)).length, ids.length)
        for (const worker of workers) worker.child.kill('SIGTERM')
      })

      it('a rate of 10 per second holds for 4 processes over 60 seconds: no 1 s window has more than 10 starts', async (t) => {
        const harness = await freshStore(t, store)
        await harness.store.control({ limit: { queue: 'default', rate: { limit: 10, perMs: 1000 } } })
        const client = createClient({ store: harness.store })
        // More than 60 s can start, so the rate, not the backlog, sets the pace throughout.
        await client.enqueueMany(stampedJobs(RATE_RUN_S * 10 + 100))
        const workers = await startWorkers(t, urlOf(harness), 10, ['--lease', `${LEASE_MS}ms`])
        await new Promise((resolve) => setTimeout(resolve, RATE_RUN_S * 1000))
        for (const worker of workers) worker.child.kill('SIGTERM')
        await Promise.all(workers.map((worker) => worker.waitForExit(30_000)))

        // A start is a claim, timed by the store's clock (which the rate uses): the handlers begin a
        // few ms later, by a delay that differs from job to job and process to process.
        const starts = (await startTimes(harness.store)).map((job) => job.claimedAt).sort((a, b) => a - b)
        for (let i = 0; i + 10 < starts.length; i++) {
          const spread = starts[i + 10]! - starts[i]!
          assert.ok(spread >= 1000, `11 starts within ${spread} ms, from start ${i} of ${starts.length}`)
        }
        // Used, not undershot: about 10 a second from the first start on.
        assert.ok(starts.length >= RATE_RUN_S * 10 * 0.9, `${starts.length} starts in ${RATE_RUN_S} s`)
      })

      it('a group with 1 job is not held behind a group with 10,000', async (t) => {
        const harness = await freshStore(t, store)
        const client = createClient({ store: harness.store })
        await client.enqueueMany(stampedJobs(10_000, 'big'))
        const [small] = await client.enqueueMany(stampedJobs(1, 'small'))
        const workers = await startWorkers(t, urlOf(harness), 5)
        await waitFor(
          async () => (await harness.store.listJobs({ ids: [small!.id] })).jobs[0]?.state === 'completed',
          30_000,
          "the small group's job completed",
        )
        for (const worker of workers) worker.child.kill('SIGTERM')
        await Promise.all(workers.map((worker) => worker.waitForExit(30_000)))
        const starts = await startTimes(harness.store)
        const rank = starts.findIndex((job) => job.id === small!.id)
        // Taken in the first claims: at most one claim's worth per process went first (each holds
        // 5 running and up to 5 ahead); draining the big group first would rank it 10,000th.
        assert.ok(
          rank >= 0 && rank < PROCESSES * 10,
          `the small job started after ${rank} of the big group's`,
        )
      })

      it('a delayed job whose start deadline passes while its queue is paused ends dead, never run', async (t) => {
        const harness = await freshStore(t, store)
        const url = urlOf(harness)
        await startWorkers(t, url, 10, ['--recover-interval', '200ms'])
        assert.equal((await runFerry(t, ['--store', url, 'pause', 'default'])).code, 0)
        const client = createClient({ store: harness.store })
        const [job] = scriptJobs(1, 0)
        const { id } = await client.enqueue(job!.name, job!.payload, { delayMs: 300, expiresInMs: 1000 })
        const { id: kept } = await client.enqueue(job!.name, job!.payload, { delayMs: 300 })
        const expired = await waitFor(
          async () => {
            const found = (await harness.store.listJobs({ ids: [id] })).jobs[0]
            return found?.state === 'dead' ? found : null
          },
          10_000,
          "the job's expiry",
        )
        assert.equal(expired.lastError?.kind, 'expired')
        assert.equal(expired.attempts, 0, 'never run')
        assert.equal((await runFerry(t, ['--store', url, 'resume', 'default'])).code, 0)
        await waitFor(
          async () => (await harness.store.listJobs({ ids: [kept] })).jobs[0]?.state === 'completed',
          10_000,
          'the job without a deadline completed once resumed',
        )
        assert.equal((await harness.store.listJobs({ ids: [id] })).jobs[0]?.state, 'dead')
      })
    },
  )
}
