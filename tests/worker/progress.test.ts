/**
 * Progress and logs from handlers (docs/progress.md), end to end under every strategy: what a
 * handler reports reaches the store while it runs (with a lease renewal) and with its outcome,
 * stays on the job across a retry, where the next attempt reads it, and a bad value is refused in
 * the handler's own call. Real SQLite files; the conformance suite checks every store's writes.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test, type TestContext } from 'node:test'

import { createClient } from '../../src/index.js'
import type { ScriptPayload } from '../support/handlers/scripted.js'
import { waitFor, waitForEvent } from '../support/async.js'
import { tempStore } from '../support/sqlite-harness.js'
import { getExistingJob } from '../support/store-calls.js'
import { createWorker, fixtureHandlers } from '../support/workers.js'

async function setup(t: TestContext, strategy: 'inline' | 'threads' | 'processes' | 'fork') {
  const temp = await tempStore(t)
  const client = createClient({ store: temp.store })
  const started = createWorker(t, {
    store: temp.store,
    handlers: fixtureHandlers('scripted.ts'),
    strategy,
    concurrency: 1,
    backoff: { baseMs: 10, maxMs: 20 },
    // Renewed every 40 s: a report seen sooner came with the renewal the report asked for.
    leaseMs: 120_000,
  })
  await started.worker.start()
  const enqueue = async (payload: ScriptPayload, maxAttempts = 1) =>
    (await client.enqueue('script', payload, { maxAttempts })).id
  return { ...temp, ...started, enqueue }
}

for (const strategy of ['inline', 'threads', 'processes', 'fork'] as const) {
  describe(`progress and logs under the ${strategy} strategy`, () => {
    test('reach the store while the handler runs, and the retry reads them', async (t) => {
      const { store, worker, errors, enqueue, dir } = await setup(t, strategy)
      const go = join(dir, 'go')
      const id = await enqueue(
        {
          steps: [
            {
              progress: [1, { done: 2, of: 4 }],
              logs: ['started', 'halfway'],
              waitForFile: go,
              throw: 'flaky',
            },
            { logs: ['resumed'], echoReports: true },
          ],
        },
        2,
      )
      // A renewal carries them about a second after they were reported (the report asks for it,
      // long before the lease's own renewal), while the attempt still runs.
      const running = await waitFor(
        async () => {
          const job = await getExistingJob(store, id)
          return job.logs.length === 2 ? job : null
        },
        10_000,
        'the reports reaching the store',
      )
      assert.equal(running.state, 'active')
      assert.deepEqual(running.progress, { done: 2, of: 4 }, 'the latest progress only')
      assert.deepEqual(running.logs, ['started', 'halfway'])

      const completed = waitForEvent(worker, 'job:completed', undefined, 10_000)
      writeFileSync(go, '')
      const [, result] = await completed
      assert.deepEqual(
        result,
        { progress: { done: 2, of: 4 }, logs: ['started', 'halfway'] },
        "the second attempt was claimed with the first one's progress and logs",
      )
      const done = await getExistingJob(store, id)
      assert.equal(done.state, 'completed')
      assert.equal(done.attempts, 2)
      assert.deepEqual(done.progress, { done: 2, of: 4 })
      assert.deepEqual(done.logs, ['started', 'halfway', 'resumed'])
      assert.deepEqual(errors, [])
    })

    test('a report made just before the handler returns is written with its outcome', async (t) => {
      const { store, worker, enqueue } = await setup(t, strategy)
      const completed = waitForEvent(worker, 'job:completed', undefined, 10_000)
      const id = await enqueue({ steps: [{ progress: [100], logs: ['done'], result: 'ok' }] })
      await completed
      const job = await getExistingJob(store, id)
      assert.equal(job.progress, 100)
      assert.deepEqual(job.logs, ['done'])
    })

    test('refuses a progress value that is not JSON or too large, in the handler', async (t) => {
      const { store, worker, enqueue } = await setup(t, strategy)
      const completed = waitForEvent(worker, 'job:completed', undefined, 10_000)
      const id = await enqueue({ steps: [{ badProgress: 'x'.repeat(5000) }] })
      const [, result] = await completed
      assert.deepEqual(result, { name: 'ValidationError', code: 'payload_too_large', field: 'progress' })
      assert.equal((await getExistingJob(store, id)).progress, null, 'nothing was kept')
    })
  })
}

test('keeps the last 100 log lines, each cut to 1,000 characters', async (t) => {
  const { store, worker, enqueue } = await setup(t, 'inline')
  const lines = Array.from({ length: 150 }, (_, i) => `line ${i}`)
  lines[149] = 'y'.repeat(2000)
  const completed = waitForEvent(worker, 'job:completed', undefined, 10_000)
  const id = await enqueue({ steps: [{ logs: lines }] })
  await completed
  const { logs } = await getExistingJob(store, id)
  assert.equal(logs.length, 100)
  assert.equal(logs[0], 'line 50')
  assert.equal(logs[99], `${'y'.repeat(999)}…`)
})
