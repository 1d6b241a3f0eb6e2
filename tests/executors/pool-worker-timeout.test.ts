import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createClient } from '../../src/index.js'
import { createExecutor } from '../../src/worker/executors/create-executor.js'
import { waitForEvent } from '../support/async.js'
import { tempStore } from '../support/sqlite-harness.js'
import { getExistingJob } from '../support/store-calls.js'
import { startWorker } from '../support/workers.js'
import { capture, POOL_HANDLERS } from './pool-helpers.js'

test('a worker records a timed-out job whose process had to be killed as a timeout with the kill detail', async (t) => {
  const { store } = await tempStore(t)
  const executor = createExecutor('processes', POOL_HANDLERS, {
    size: 1,
    killGraceMs: 100,
    stdout: capture().stream,
    stderr: capture().stream,
  })
  const { worker } = await startWorker(t, { store, handlers: POOL_HANDLERS, executor, concurrency: 1 })
  const dead = waitForEvent(worker, 'job:dead', undefined, 15_000)
  const { id } = await createClient({ store }).enqueue('blocksLoop', null, { timeoutMs: 200, maxAttempts: 1 })
  await dead
  const { lastError } = await getExistingJob(store, id)
  assert.equal(lastError?.kind, 'timeout')
  assert.equal(lastError?.timeoutMs, 200)
  assert.equal(
    lastError?.message,
    'timed out after 200 ms; the process running the job was killed by SIGKILL',
  )
  assert.equal(lastError?.signal, 'SIGKILL')
})
