/**
 * Wall-clock steps, as NTP, a resumed VM or `date -s` make them, under real `ferry work` processes
 * (tests/support/fake-clock.ts steps their wall clock; their monotonic clock, as on a
 * real machine, does not step). A healthy worker keeps its leases across a step of ten minutes
 * either way: its jobs complete on their one attempt, nothing is recovered under it, nothing runs
 * twice. And a worker that dies just after a step still has its job back about one lease later:
 * not ten minutes early or an hour late.
 *
 * SQLite reads the clock of the process that writes, so the workers are put on the fake clock;
 * PostgreSQL and Redis read their server's, so a server of the test's own is.
 */
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'

import { createClient, type Store } from '../../src/index.js'
import { PostgresStore } from '../../src/postgres.js'
import { RedisStore } from '../../src/redis.js'
import type { ScriptPayload } from '../support/handlers/scripted.js'
import { fakeClock, fakeClockUnavailable, type FakeClock } from '../support/fake-clock.js'
import { privatePostgres, privatePostgresUnavailable } from '../support/private-postgres.js'
import { redisServerMissingReason, startOwnRedisServer } from '../support/redis-harness.js'
import { skipUnlessAvailable } from '../support/services.js'
import { tempDatabase } from '../support/sqlite-harness.js'
import { waitFor } from '../support/async.js'
import { defer } from '../support/cleanup.js'
import { type FerryProcess, spawnFerry, WORKER_STARTED } from '../support/processes.js'
import { allJobs } from '../support/store-harness.js'
import { fixtureHandlers } from '../support/workers.js'
import { getJob } from '../support/store-calls.js'

const SCRIPTED = fixtureHandlers('scripted.ts')
const LEASE_MS = 3000
/** Ten minutes, the step a healthy worker must ride out. */
const STEP_S = 600
const JOBS = 6
/** Each job runs past several renewals of its lease, and across the step. */
const JOB_MS = 4 * LEASE_MS

interface StoreSetUp {
  /** A store of the test's own (on the real clock) and the URL the workers use. */
  store: Store
  url: string
  /** The clock the store's time comes from: the workers' (SQLite) or the server's. */
  clock: FakeClock
  /** The environment a worker runs with. */
  workerEnv: Record<string, string>
}

const slow = (ms: number): ScriptPayload => ({ steps: [{ sleepMs: ms, result: 'done' }] })

function startWorker(t: TestContext, setUp: StoreSetUp, extra: string[] = []): FerryProcess {
  return spawnFerry(
    t,
    [
      '--store',
      setUp.url,
      'work',
      '--handlers',
      SCRIPTED,
      '--lease',
      `${LEASE_MS}ms`,
      '--concurrency',
      String(JOBS),
      ...extra,
    ],
    { env: setUp.workerEnv },
  )
}

async function sqliteSetUp(t: TestContext): Promise<StoreSetUp> {
  const database = tempDatabase(t)
  const clock = fakeClock(t)
  return { store: await database.open(), url: database.url, clock, workerEnv: clock.env }
}

async function postgresSetUp(t: TestContext): Promise<StoreSetUp> {
  const clock = fakeClock(t)
  const server = await privatePostgres(t, { env: clock.env })
  const store = await PostgresStore.open({ connectionString: server.url })
  defer(t, () => store.close())
  return { store, url: server.url, clock, workerEnv: {} }
}

function clockStepCases(name: string, setUpStore: (t: TestContext) => Promise<StoreSetUp>): void {
  for (const direction of [1, -1] as const) {
    const step = direction * STEP_S
    const label = direction > 0 ? 'forward' : 'back'

    it(`${name}: a healthy worker keeps its leases across a ${STEP_S / 60}-minute step ${label}`, async (t) => {
      const setUp = await setUpStore(t)
      const client = createClient({ store: setUp.store })
      const ids = (
        await client.enqueueMany(
          Array.from({ length: JOBS }, () => ({
            name: 'script',
            payload: slow(JOB_MS),
            options: { maxAttempts: 1 },
          })),
        )
      ).map((result) => result.id)
      const worker = startWorker(t, setUp, ['--limit', String(JOBS)])
      await worker.waitForOutput(WORKER_STARTED)
      await waitFor(
        async () => (await allJobs(setUp.store)).every((job) => job.state === 'active'),
        20_000,
        'every job running',
      )
      // Past one renewal, then the step, then at least a lease on the new clock.
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS / 2))
      setUp.clock.setOffset(step)
      const exit = await worker.waitForExit(JOB_MS * 3)
      assert.equal(exit.code, 0, exit.stderr)
      assert.match(
        exit.stderr,
        new RegExp(`${JOBS} completed, 0 failed and retried, 0 dead, 0 snoozed, 0 lease lost`),
      )
      const jobs = await allJobs(setUp.store)
      assert.deepEqual(
        jobs.map((job) => [job.id, job.state, job.attempts]),
        ids.map((id) => [id, 'completed', 1]),
        'each completed on its one attempt: never recovered, never run twice',
      )
    })

    it(`${name}: the job of a worker that dies just after a step ${label} comes back about one lease later`, async (t) => {
      const setUp = await setUpStore(t)
      const { id } = await createClient({ store: setUp.store }).enqueue('script', {
        steps: [{ sleepMs: 60_000 }, { result: 'second run' }],
      } satisfies ScriptPayload)
      const first = startWorker(t, setUp)
      await first.waitForOutput(WORKER_STARTED)
      await waitFor(
        async () => (await getJob(setUp.store, id))?.state === 'active',
        20_000,
        'the job running',
      )
      // Killed right after the step, before it could renew on the new clock.
      setUp.clock.setOffset(step)
      first.child.kill('SIGKILL')
      await first.exited
      const diedAt = performance.now()
      const second = startWorker(t, setUp)
      await waitFor(
        async () => (await getJob(setUp.store, id))?.state === 'completed',
        // A lease, half a lease of watching by a recoverer that just started, its start-up under
        // tsx and a sweep: well under a minute, where the step would be 10 minutes early or late.
        30_000,
        'the job completed by the second worker',
        100,
      )
      const backAfterMs = performance.now() - diedAt
      t.diagnostic(`back and completed ${Math.round(backAfterMs)} ms after its worker died`)
      const job = (await getJob(setUp.store, id))!
      assert.equal(job.attempts, 2)
      assert.deepEqual(job.result, 'second run')
      second.child.kill('SIGTERM')
      await second.waitForExit()
    })
  }
}

describe('clock steps on SQLite', { ...skipUnlessAvailable(fakeClockUnavailable()) }, () => {
  clockStepCases('sqlite', sqliteSetUp)
})

async function redisSetUp(t: TestContext): Promise<StoreSetUp> {
  const clock = fakeClock(t)
  const server = await startOwnRedisServer({ env: clock.env })
  defer(t, () => server.close())
  const store = await RedisStore.open({ url: server.url, onWarning: () => {} })
  defer(t, () => store.close())
  return { store, url: server.url, clock, workerEnv: {} }
}

describe(
  'clock steps on PostgreSQL',
  { ...skipUnlessAvailable(fakeClockUnavailable() ?? privatePostgresUnavailable()) },
  () => {
    clockStepCases('postgres', postgresSetUp)
  },
)

describe(
  'clock steps on Redis',
  { ...skipUnlessAvailable(fakeClockUnavailable() ?? redisServerMissingReason()) },
  () => {
    clockStepCases('redis', redisSetUp)
  },
)
