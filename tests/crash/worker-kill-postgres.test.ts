/**
 * The worker-crash invariant on PostgreSQL (tests/worker/kill.test.ts does it on SQLite): a
 * `ferry work` process SIGKILLed mid-job loses nothing. Its jobs stay active until their leases
 * run out, then another worker's recovery sweep puts them back and they complete, the
 * interrupted attempt counted. Real processes, a real SIGKILL, real (short) leases.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { createClient, type JobSpec } from '../../src/index.js'
import type { ScriptPayload } from '../fixtures/handlers/scripted.js'
import { postgresUnreachableReason, tempSchema } from '../helpers/postgres-harness.js'
import { whenAvailable } from '../helpers/services.js'
import {
  allJobs,
  createWorker,
  fixtureHandlers,
  spawnFerry,
  stopWorker,
  waitFor,
  waitForEvent,
} from '../helpers/worker-helpers.js'

await whenAvailable(postgresUnreachableReason(), () => {
  test('jobs of a SIGKILLed worker process on PostgreSQL complete on another worker once their leases expire', async (t) => {
    const { open, url } = tempSchema(t)
    const store = await open()
    // Every job's first attempt is slow: the killed worker is mid-job on each it claimed.
    const payload: ScriptPayload = { steps: [{ sleepMs: 60_000 }, { result: 'second attempt' }] }
    const batch: JobSpec[] = [1, 2, 3, 4].map(() => ({ name: 'script', payload }))
    const ids = (await createClient({ store }).enqueueMany(batch)).map(({ id }) => id)

    const ferry = spawnFerry(t, [
      '--store',
      url,
      'work',
      '--handlers',
      fixtureHandlers('scripted.ts'),
      '--concurrency',
      '2',
      '--lease',
      '1s',
    ])
    await waitFor(
      async () => (await store.listJobs({ state: 'active' })).jobs.length === 2,
      20_000,
      'two jobs being active',
    )
    ferry.child.kill('SIGKILL')
    assert.equal((await ferry.waitForExit(5000)).signal, 'SIGKILL')

    const interrupted = (await store.listJobs({ state: 'active' })).jobs
    assert.equal(interrupted.length, 2)
    const leaseEnds = new Map(interrupted.map((job) => [job.id, job.leaseExpiresAt!]))

    const { worker, errors } = createWorker(t, {
      store: await open(),
      handlers: { script: () => 'recovered' },
      leaseMs: 1000,
      recoverIntervalMs: 100,
    })
    const claimedAt = new Map<string, number>()
    worker.on('job:claimed', (job) => claimedAt.set(job.id, Date.now()))
    const recovered: string[] = []
    worker.on('recover:done', ({ retried }) => recovered.push(...retried))
    const allCompleted = waitForEvent(worker, 'job:completed', () => worker.counts.completed === 4, 15_000)
    await worker.start()
    await allCompleted
    await stopWorker(worker)

    assert.deepEqual(recovered.sort(), [...leaseEnds.keys()].sort())
    const jobs = await allJobs(store)
    assert.deepEqual(
      jobs.map((job) => job.id),
      ids,
    )
    for (const job of jobs) {
      assert.equal(job.state, 'completed', `job ${job.id}`)
      assert.equal(job.result, 'recovered', `job ${job.id}`)
      const leaseEnd = leaseEnds.get(job.id)
      if (leaseEnd === undefined) {
        assert.equal(job.attempts, 1, `job ${job.id} was never started by the killed worker`)
      } else {
        assert.equal(job.attempts, 2, `job ${job.id}: the interrupted attempt counts`)
        // Lease ends are the server's clock, claims this host's: the same machine here.
        assert.ok(
          claimedAt.get(job.id)! >= leaseEnd - 50,
          `job ${job.id} was claimed again before its lease ended`,
        )
        assert.equal(job.lastError?.kind, 'lease_expired', `job ${job.id}`)
      }
    }
    assert.deepEqual(errors, [])
  })
})
