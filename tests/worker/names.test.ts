/**
 * Workers with different handlers share a queue: each claims only the job names it has handlers
 * for (ClaimParams.names). The case of a rolling deploy that adds a job type: producers already on
 * the new version enqueue it while old workers still run; an old worker must leave it in line,
 * attempt unused, for a new worker, instead of failing it "no handler" until it is dead.
 * Two Worker instances on separate store instances (as two processes would have), on every store.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import { createClient } from '../../src/index.js'
import { STORES, freshStore } from '../support/stores.js'
import { deferred, waitForEvent, within } from '../support/async.js'
import { getExistingJob } from '../support/store-calls.js'
import { startWorker, stopWorker } from '../support/workers.js'

const OLD_HANDLERS = { 'send-email': async () => 'sent' }
const NEW_HANDLERS = { ...OLD_HANDLERS, 'send-sms': async () => 'texted' }

for (const storeUnderTest of STORES) {
  describe(
    `an old and a new worker on one ${storeUnderTest.name} queue`,
    { skip: storeUnderTest.skip },
    () => {
      it('the old worker never takes the new job type; the new worker completes it on attempt 1', async (t) => {
        const harness = await freshStore(t, storeUnderTest)
        const producer = createClient({ store: harness.store })
        const old = await startWorker(t, { store: await harness.openPeer(), handlers: OLD_HANDLERS })
        const claimedByOld: string[] = []
        old.worker.on('job:claimed', (job) => claimedByOld.push(job.name))

        // New producers enqueue the new job type, then an old one behind it (same priority, later):
        // once the old worker has run that one, it has passed the new ones by.
        const emailDone = waitForEvent(
          old.worker,
          'job:completed',
          (job) => job.name === 'send-email',
          10_000,
        )
        const sms: string[] = []
        for (let i = 0; i < 3; i++) sms.push((await producer.enqueue('send-sms', { i })).id)
        await producer.enqueue('send-email', { to: 'ada@example.com' })
        await emailDone
        for (const id of sms) {
          const job = await getExistingJob(harness.store, id)
          assert.equal(job.state, 'ready', `job ${id} is still in line`)
          assert.equal(job.attempts, 0, `job ${id} has used no attempt`)
          assert.equal(job.lastError, null)
        }

        // The new worker arrives; producers keep enqueueing the new type while both workers run.
        const fresh = await startWorker(t, { store: await harness.openPeer(), handlers: NEW_HANDLERS })
        const allDone = deferred()
        const completed = new Set<string>()
        fresh.worker.on('job:completed', (job) => {
          if (job.name === 'send-sms') completed.add(job.id)
          if (completed.size === 6) allDone.resolve()
        })
        for (let i = 3; i < 6; i++) sms.push((await producer.enqueue('send-sms', { i })).id)
        await within(10_000, 'the new worker completing the 6 new jobs', allDone.promise)
        await stopWorker(old.worker)
        await stopWorker(fresh.worker)
        await producer.close()

        for (const id of sms) {
          const job = await getExistingJob(harness.store, id)
          assert.equal(job.state, 'completed')
          assert.equal(job.attempts, 1, `job ${id} completed on its first attempt`)
          assert.equal(job.lastError, null)
        }
        assert.deepEqual(claimedByOld, ['send-email'], 'the old worker claimed only what it knows')
        assert.equal(old.worker.counts.failed + old.worker.counts.dead, 0)
        assert.deepEqual(old.errors, [])
        assert.deepEqual(fresh.errors, [])
      })
    },
  )
}
