/**
 * Stopping leaves no job active: a graceful stop lets running jobs finish and settles them; a hard
 * stop aborts them and puts them back to ready without using an attempt. Checked on a Worker in
 * this process, on `ferry work` processes sent SIGTERM and SIGINT, and through `ferry stop-workers`,
 * which must reach a worker in another process.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { createClient, type JobContext } from '../../src/index.js'
import type { ScriptPayload } from '../support/handlers/scripted.js'
import { deferred, sleep, waitFor, waitForEvent } from '../support/async.js'
import { logMessages, runFerry, spawnFerry, WORKER_STARTED } from '../support/processes.js'
import { tempStore } from '../support/sqlite-harness.js'
import { getExistingJob } from '../support/store-calls.js'
import { allJobs } from '../support/store-harness.js'
import { createWorker, fixtureHandlers, stopWorker } from '../support/workers.js'

const SCRIPTED = fixtureHandlers('scripted.ts')

test('stop() lets running jobs finish and settles them before it resolves; nothing is left active', async (t) => {
  const { store } = await tempStore(t)
  const client = createClient({ store })
  const ids = await Promise.all([1, 2, 3, 4].map(async (n) => (await client.enqueue('step', { n })).id))

  const release = deferred()
  const { worker, errors } = createWorker(t, {
    store,
    concurrency: 3,
    handlers: { step: async ({ n }: { n: number }) => (await release.promise, n * 10) },
  })
  const threeClaimed = waitForEvent(worker, 'job:claimed', () => worker.counts.claimed === 3)
  await worker.start()
  await threeClaimed

  const stopping = waitForEvent(worker, 'worker:stopping')
  const stoppedEvent = waitForEvent(worker, 'worker:stopped')
  let stopped = false
  const stop = stopWorker(worker).then((reason) => {
    stopped = true
    return reason
  })
  assert.deepEqual(await stopping, ['requested'])
  await sleep(50)
  assert.equal(stopped, false, 'stop() resolved while jobs were still running')
  assert.equal(worker.activeCount, 3)

  release.resolve()
  assert.equal(await stop, 'requested')
  assert.deepEqual(await stoppedEvent, ['requested'])
  assert.equal(worker.activeCount, 0)
  assert.equal(worker.counts.completed, 3)
  const jobs = await allJobs(store)
  assert.deepEqual(
    jobs.map((job) => [job.id, job.state, job.result]),
    [
      [ids[0], 'completed', 10],
      [ids[1], 'completed', 20],
      [ids[2], 'completed', 30],
      // Never claimed: stop() stopped the claiming.
      [ids[3], 'ready', null],
    ],
  )
  assert.equal(jobs[3]!.attempts, 0)
  assert.deepEqual(errors, [])
})

test('stop({ graceful: false }) aborts running jobs and puts them back to ready with attempts unchanged', async (t) => {
  const { store } = await tempStore(t)
  const client = createClient({ store })
  const politeId = (await client.enqueue('polite', null, { maxAttempts: 1 })).id
  const stubbornId = (await client.enqueue('stubborn', null, { maxAttempts: 1 })).id

  const signals: AbortSignal[] = []
  const { worker, errors } = createWorker(t, {
    store,
    concurrency: 2,
    handlers: {
      polite: (_payload: unknown, { signal }: JobContext) => {
        signals.push(signal)
        return new Promise((resolve) => signal.addEventListener('abort', () => resolve('stopped early')))
      },
      // Never ends, and ignores its signal: a hard stop must not wait for it.
      stubborn: (_payload: unknown, { signal }: JobContext) => {
        signals.push(signal)
        return new Promise(() => {})
      },
    },
  })
  const bothClaimed = waitForEvent(worker, 'job:claimed', () => worker.counts.claimed === 2)
  await worker.start()
  await bothClaimed

  assert.equal(await stopWorker(worker, { graceful: false }), 'requested')
  assert.equal(signals.length, 2)
  assert.ok(signals.every((signal) => signal.aborted))
  assert.equal(worker.counts.completed, 0)
  for (const id of [politeId, stubbornId]) {
    const job = await getExistingJob(store, id)
    assert.equal(job.state, 'ready', `job ${id}`)
    assert.equal(job.attempts, 0, `job ${id}`)
    assert.equal(job.lastError, null, `job ${id}`)
    assert.equal(job.workerId, null, `job ${id}`)
  }
  assert.deepEqual(errors, [])
})

function slow(sleepMs: number, result: unknown = null): ScriptPayload {
  return { steps: [{ sleepMs, result }] }
}

test('ferry work sent SIGTERM once finishes the running job, then exits 0', async (t) => {
  const { store, url } = await tempStore(t)
  const client = createClient({ store })
  const ferry = spawnFerry(t, ['--store', url, 'work', '--handlers', SCRIPTED, '--concurrency', '1'])
  // Jobs only after the worker's start line: its signal handlers go in just after it (see below).
  await ferry.waitForOutput(WORKER_STARTED)
  const { id } = await client.enqueue('script', slow(1500, 'finished'))
  const { id: waitingId } = await client.enqueue('script', slow(0))
  await waitFor(
    async () => (await getExistingJob(store, id)).state === 'active',
    10_000,
    'the job being active',
  )

  ferry.child.kill('SIGTERM')
  // The way to abort is the signal that stopped it: Ctrl-C is SIGINT's.
  await ferry.waitForOutput(
    /"msg":"stopping \(requested: SIGTERM\) after 1 running job; SIGTERM again to abort them"/,
  )
  const exit = await ferry.waitForExit()

  assert.equal(exit.code, 0, exit.stderr)
  assert.match(exit.stderr, /stopped \(requested\): 1 completed/)
  const job = await getExistingJob(store, id)
  assert.equal(job.state, 'completed')
  assert.equal(job.result, 'finished')
  const waiting = await getExistingJob(store, waitingId)
  assert.equal(waiting.state, 'ready')
  assert.equal(waiting.attempts, 0)
})

test('ferry work sent SIGINT twice aborts the running job, which goes back to ready, and exits 0', async (t) => {
  const { store, url } = await tempStore(t)
  const ferry = spawnFerry(t, ['--store', url, 'work', '--handlers', SCRIPTED])
  await ferry.waitForOutput(WORKER_STARTED)
  const { id } = await createClient({ store }).enqueue('script', slow(60_000))
  await waitFor(
    async () => (await getExistingJob(store, id)).state === 'active',
    10_000,
    'the job being active',
  )

  ferry.child.kill('SIGINT')
  await ferry.waitForOutput(
    /"msg":"stopping \(requested: SIGINT\) after 1 running job; Ctrl-C again to abort them"/,
  )
  ferry.child.kill('SIGINT')
  const exit = await ferry.waitForExit(5000)

  assert.equal(exit.code, 0, exit.stderr)
  assert.match(exit.stderr, /aborting running jobs/)
  const job = await getExistingJob(store, id)
  assert.equal(job.state, 'ready')
  assert.equal(job.attempts, 0)
  assert.equal(job.workerId, null)
})

test('ferry work stops gracefully on a SIGTERM sent the moment it prints that it started', async (t) => {
  const { url } = await tempStore(t)
  // Several at once, so the signals land at slightly different moments after the line.
  const ferries = Array.from({ length: 6 }, () =>
    spawnFerry(t, ['--store', url, 'work', '--handlers', SCRIPTED]),
  )
  const exits = await Promise.all(
    ferries.map(async (ferry) => {
      await ferry.waitForOutput(WORKER_STARTED)
      ferry.child.kill('SIGTERM')
      return ferry.waitForExit(10_000)
    }),
  )
  for (const exit of exits) {
    assert.equal(exit.signal, null, `killed by ${exit.signal} instead of stopping; stderr:\n${exit.stderr}`)
    assert.equal(exit.code, 0, exit.stderr)
    assert.match(exit.stderr, /stopped \(requested\)/)
    // Idle: one line, with nothing about running jobs to wait for or abort.
    const messages = logMessages(exit.stderr)
    assert.match(messages, /^stopping \(requested: SIGTERM\)$/m)
    assert.equal(messages.match(/stopping/g)?.length, 1, exit.stderr)
  }
})

test('ferry stop-workers stops an idle worker in another process; a worker started after it keeps running', async (t) => {
  const { store, url } = await tempStore(t)
  const before = spawnFerry(t, ['--store', url, 'work', '--handlers', SCRIPTED])
  await before.waitForOutput(WORKER_STARTED)

  const exited = before.exited.then((exit) => ({ ...exit, at: Date.now() }))
  const request = await runFerry(t, ['--store', url, 'stop-workers'])
  assert.equal(request.code, 0, request.stderr)
  // The time the request was written, as the store keeps it.
  const requestedAt = (await store.control()).stopRequestedAt
  assert.ok(requestedAt !== null, request.stdout)
  await before.waitForExit(5000)
  const exit = await exited
  const tookMs = exit.at - requestedAt
  t.diagnostic(`the worker exited ${tookMs} ms after the stop request`)
  assert.equal(exit.code, 0, exit.stderr)
  assert.match(exit.stderr, /stopped \(stop-workers\)/)
  assert.ok(tookMs <= 2000, `the worker took ${tookMs} ms to stop after the request`)

  // A worker started after the request is not affected by it: it works a job and stays up.
  const after = spawnFerry(t, ['--store', url, 'work', '--handlers', SCRIPTED])
  await after.waitForOutput(WORKER_STARTED)
  const { id } = await createClient({ store }).enqueue('script', slow(0, 'still working'))
  await waitFor(
    async () => (await getExistingJob(store, id)).state === 'completed',
    5000,
    'the job completing',
  )
  assert.equal(after.child.exitCode, null, `the later worker exited: ${after.stderr}`)
  assert.doesNotMatch(after.stderr, /stopping/)

  after.child.kill('SIGTERM')
  const afterExit = await after.waitForExit(5000)
  assert.equal(afterExit.code, 0, afterExit.stderr)
  assert.match(afterExit.stderr, /stopped \(requested\): 1 completed/)
})
