/**
 * A job's whole process tree ends with it under the processes and fork strategies: a handler that
 * starts a process (`sleep 3000`) and does not wait for it leaves nothing running once its job
 * timed out, was cancelled, had its child recycled, or the worker stopped (gracefully or hard).
 * Each child runs in a process group of its own, and the pool kills the group. A Worker in this
 * process on a real SQLite file; the sleep's pid comes from a file the handler writes.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { describe, test, type TestContext } from 'node:test'

import { createClient, type WorkerOptions } from '../../src/index.js'
import type { PoolExecutorOptions } from '../../src/worker/executors/pool/pool-options.js'
import { createExecutor } from '../../src/worker/executors/create-executor.js'
import { waitForEvent } from '../support/async.js'
import { killRecordedAfter, waitForPids, waitUntilGone } from '../support/processes.js'
import { tempStore } from '../support/sqlite-harness.js'
import { getExistingJob } from '../support/store-calls.js'
import { createWorker, fixtureHandlers, stopWorker } from '../support/workers.js'

const HANDLERS = fixtureHandlers('process-tree.mjs')
/** A child start under tsx takes a second or more on a loaded machine: generous, never reached otherwise. */
const EVENT_TIMEOUT_MS = 30_000

const discard = (): Writable => new Writable({ write: (_chunk, _encoding, done) => done() })

/** A worker (not started) of one job at a time on a pool of one child, with a short kill grace. */
async function setup(
  t: TestContext,
  strategy: 'processes' | 'fork',
  pool: PoolExecutorOptions = {},
  options: Partial<WorkerOptions> = {},
) {
  const temp = await tempStore(t)
  const executor = createExecutor(strategy, HANDLERS, {
    size: 1,
    killGraceMs: 300,
    stdout: discard(),
    stderr: discard(),
    ...pool,
  })
  const { worker } = createWorker(t, {
    store: temp.store,
    handlers: HANDLERS,
    executor,
    concurrency: 1,
    ...options,
  })
  const pidFile = join(temp.dir, 'pids.json')
  killRecordedAfter(t, [pidFile])
  return { ...temp, client: createClient({ store: temp.store }), worker, pidFile }
}

for (const strategy of ['processes', 'fork'] as const) {
  describe(`${strategy}: what a job started ends with it`, () => {
    test('a job that times out: its process and the sleep it started are killed', async (t) => {
      const { worker, client, store, pidFile } = await setup(t, strategy)
      const dead = waitForEvent(worker, 'job:dead', undefined, EVENT_TIMEOUT_MS)
      const { id } = await client.enqueue(
        'spawns-sleep',
        { pidFile, then: 'hang' },
        { timeoutMs: 300, maxAttempts: 1 },
      )
      await worker.start()
      await dead

      const job = await getExistingJob(store, id)
      assert.equal(job.lastError?.kind, 'timeout', JSON.stringify(job.lastError))
      const { pid, sleepPid } = await waitForPids(pidFile)
      await waitUntilGone([pid, sleepPid!], "the timed-out job's process and its sleep")
      assert.equal(await stopWorker(worker), 'requested')
    })

    test('a job cancelled while it runs: the sleep it started is killed once the worker learns it', async (t) => {
      // A short lease: the renewal that finds the job cancelled comes within 200 ms.
      const { worker, client, store, pidFile, openPeer } = await setup(t, strategy, {}, { leaseMs: 600 })
      const operator = await openPeer() // as `ferry cancel` in another process would
      // detach: the sleep holds the child's stdout and stderr, and the child can exit without it.
      const { id } = await client.enqueue('spawns-sleep', { pidFile, then: 'until-aborted', detach: true })
      await worker.start()
      const { sleepPid } = await waitForPids(pidFile)

      const lost = waitForEvent(worker, 'job:lease-lost', (job) => job.id === id, EVENT_TIMEOUT_MS)
      assert.equal(await operator.cancel({ ids: [id] }), 1)
      await lost
      await waitUntilGone([sleepPid!], "the cancelled job's sleep")
      assert.equal((await getExistingJob(store, id)).lastError?.kind, 'cancelled')
      assert.equal(await stopWorker(worker), 'requested')
    })

    const recycling: { title: string; pool: PoolExecutorOptions; detach: boolean }[] =
      strategy === 'fork'
        ? [{ title: 'the process that ran a job (fork: one per job)', pool: {}, detach: true }]
        : [
            { title: 'a child recycled after maxJobsPerChild', pool: { maxJobsPerChild: 1 }, detach: false },
            { title: 'a child recycled past maxRssBytes', pool: { maxRssBytes: 1 }, detach: true },
          ]
    for (const { title, pool, detach } of recycling) {
      test(`${title}: it and the sleep its job left running are gone while the worker runs on`, async (t) => {
        const { worker, client, store, pidFile } = await setup(t, strategy, pool)
        const completed = waitForEvent(worker, 'job:completed', undefined, EVENT_TIMEOUT_MS)
        const { id } = await client.enqueue('spawns-sleep', { pidFile, then: 'return', detach })
        await worker.start()
        await completed

        const { pid, sleepPid } = (await getExistingJob(store, id)).result as {
          pid: number
          sleepPid: number
        }
        // The worker still runs: recycling, not the stop, ended them.
        await waitUntilGone([pid, sleepPid], "the recycled child and its job's sleep")
        assert.equal(worker.activeCount, 0)
        assert.equal(await stopWorker(worker), 'requested')
      })
    }

    test('a graceful stop: the running job completes, then its process and sleep are gone', async (t) => {
      // Recycling off: only the stop ends the child that ran the job.
      const { worker, client, store, pidFile } = await setup(t, strategy, { maxJobsPerChild: null })
      const { id } = await client.enqueue('spawns-sleep', { pidFile, ms: 1000 })
      await worker.start()
      const { pid, sleepPid } = await waitForPids(pidFile)

      assert.equal(await stopWorker(worker), 'requested')
      const job = await getExistingJob(store, id)
      assert.equal(job.state, 'completed', JSON.stringify(job.lastError))
      assert.equal(job.attempts, 1)
      await waitUntilGone([pid, sleepPid!], "the stopped worker's child and its job's sleep")
    })

    test('a hard stop: the running job goes back to ready, its process and sleep are killed', async (t) => {
      const { worker, client, store, pidFile } = await setup(t, strategy)
      const { id } = await client.enqueue('spawns-sleep', { pidFile, then: 'hang' })
      await worker.start()
      const { pid, sleepPid } = await waitForPids(pidFile)

      assert.equal(await stopWorker(worker, { graceful: false }), 'requested')
      assert.equal((await getExistingJob(store, id)).state, 'ready')
      await waitUntilGone([pid, sleepPid!], "the aborted job's process and its sleep")
    })
  })
}
