/**
 * A worker process SIGKILLed mid-job loses nothing, on every store: its jobs stay active until
 * their leases run out, then another worker's recovery sweep puts them back and they complete, the
 * interrupted attempt counted. A real `ferry work` process, a real SIGKILL, real (short) leases.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import { createClient, type JobSpec } from '../../src/index.js'
import type { ScriptPayload } from '../support/handlers/scripted.js'
import { freshStore, STORES, urlOf } from '../support/stores.js'
import { waitFor, waitForEvent } from '../support/async.js'
import { spawnFerry } from '../support/processes.js'
import { allJobs } from '../support/store-harness.js'
import { createWorker, fixtureHandlers, stopWorker } from '../support/workers.js'

for (const store of STORES) {
  describe(`a SIGKILLed worker on ${store.name}`, { skip: store.skip }, () => {
    it('leaves its jobs active until their leases end; another worker then completes them', async (t) => {
      const harness = await freshStore(t, store)
      // Every job's first attempt is slow: the killed worker is mid-job on each it claimed.
      const payload: ScriptPayload = { steps: [{ sleepMs: 60_000 }, { result: 'second attempt' }] }
      const batch: JobSpec[] = [1, 2, 3, 4].map(() => ({ name: 'script', payload }))
      const ids = (await createClient({ store: harness.store }).enqueueMany(batch)).map(({ id }) => id)

      const ferry = spawnFerry(t, [
        '--store',
        urlOf(harness),
        'work',
        '--handlers',
        fixtureHandlers('scripted.ts'),
        '--concurrency',
        '2',
        '--lease',
        '1s',
      ])
      await waitFor(
        async () => (await harness.store.listJobs({ state: 'active' })).jobs.length === 2,
        20_000,
        'two jobs being active',
      )
      ferry.child.kill('SIGKILL')
      assert.equal((await ferry.waitForExit(5000)).signal, 'SIGKILL')

      // The dead process's jobs are still active, each until the lease it last renewed runs out.
      const interrupted = (await harness.store.listJobs({ state: 'active' })).jobs
      assert.equal(interrupted.length, 2)
      const leaseEnds = new Map(interrupted.map((job) => [job.id, job.leaseExpiresAt!]))
      for (const job of interrupted) assert.equal(job.attempts, 1)

      // Another worker (another deployment of the handlers: its attempts are quick).
      const { worker, errors } = createWorker(t, {
        store: await harness.openPeer(),
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
      const jobs = await allJobs(harness.store)
      assert.deepEqual(
        jobs.map((job) => job.id),
        ids,
      )
      // A server store's lease ends are the server's clock and claims this host's; the same
      // machine here, but the two are read a round trip apart.
      const clockSlackMs = store.name === 'sqlite' ? 0 : 50
      for (const job of jobs) {
        assert.equal(job.state, 'completed', `job ${job.id}`)
        assert.equal(job.result, 'recovered', `job ${job.id}`)
        const leaseEnd = leaseEnds.get(job.id)
        if (leaseEnd === undefined) {
          assert.equal(job.attempts, 1, `job ${job.id} was never started by the killed worker`)
        } else {
          assert.equal(job.attempts, 2, `job ${job.id}: the interrupted attempt counts`)
          assert.ok(
            claimedAt.get(job.id)! >= leaseEnd - clockSlackMs,
            `job ${job.id} was claimed again ${leaseEnd - claimedAt.get(job.id)!} ms before its lease ended`,
          )
          // The interruption is on record.
          assert.equal(job.lastError?.kind, 'lease_expired', `job ${job.id}`)
        }
      }
      assert.equal((await harness.store.listJobs({ state: 'active' })).jobs.length, 0)
      assert.deepEqual(errors, [])
    })
  })
}
