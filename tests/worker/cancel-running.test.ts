/**
 * `ferry cancel` on a running job, from another process: the worker learns it at its next lease
 * renewal, aborts the attempt, and the isolating strategies kill the child that runs it.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'

import { createClient, createExecutor, Worker } from '../../src/index.js'
import { tempDatabase } from '../support/sqlite-harness.js'
import { waitFor, waitForEvent } from '../support/async.js'
import { isAlive } from '../support/processes.js'
import { getJob } from '../support/store-calls.js'

const BLOCKS_LOOP = fileURLToPath(new URL('../support/handlers/blocks-loop.mjs', import.meta.url))

for (const strategy of ['processes', 'threads'] as const) {
  test(`cancelling a running job from another store kills its ${strategy} child and frees the slot`, async (t) => {
    const db = tempDatabase(t)
    const store = await db.open()
    const operator = await db.open() // as `ferry cancel` in another process would
    const dir = mkdtempSync(join(tmpdir(), 'ferry-cancel-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const pidFile = join(dir, 'pid')
    const client = createClient({ store })
    const { id: stuck } = await client.enqueue('blocks-loop', { pidFile })
    const { id: next } = await client.enqueue('ok', null)

    const executor = createExecutor(strategy, BLOCKS_LOOP, { size: 1, killGraceMs: 200 })
    const worker = new Worker({ store, handlers: BLOCKS_LOOP, executor, concurrency: 1, leaseMs: 600 })
    t.after(() => worker.stop({ graceful: false }))
    await worker.start()
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '', 10_000)

    const lost = waitForEvent(worker, 'job:lease-lost', (job) => job.id === stuck, 10_000)
    assert.equal(await operator.cancel({ ids: [stuck] }), 1)
    await lost
    const completed = waitForEvent(worker, 'job:completed', (job) => job.id === next, 10_000)
    await completed

    const cancelled = await getJob(store, stuck)
    assert.equal(cancelled?.state, 'dead')
    assert.equal(cancelled?.lastError?.kind, 'cancelled')
    if (strategy === 'processes') {
      const pid = Number(readFileSync(pidFile, 'utf8'))
      await waitFor(() => !isAlive(pid), 5_000)
    }
  })
}
