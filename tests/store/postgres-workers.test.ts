/**
 * Many `ferry work` processes on one PostgreSQL schema, as on many hosts: every job is claimed
 * exactly once (attempts counts claims, so a job claimed twice would show 2), and the work is
 * shared between the processes.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'

import { createClient, type JobSpec } from '../../src/index.js'
import { postgresUnreachableReason, tempSchema } from '../support/postgres-harness.js'
import { whenAvailable } from '../support/services.js'
import { allJobs } from '../support/store-harness.js'
import { waitFor } from '../support/async.js'
import { REPO_ROOT, spawnFerry, WORKER_STARTED } from '../support/processes.js'

const OK_HANDLERS = join(REPO_ROOT, 'tests', 'support', 'handlers', 'ok.mjs')
const PROCESSES = 4
const JOBS = 2000

await whenAvailable(postgresUnreachableReason(), () => {
  test(`${PROCESSES} worker processes on one schema run each of ${JOBS} jobs exactly once`, async (t) => {
    const { open, url } = tempSchema(t)
    const store = await open()
    const workers = Array.from({ length: PROCESSES }, () =>
      spawnFerry(t, ['--store', url, 'work', '--handlers', OK_HANDLERS, '--concurrency', '8']),
    )
    await Promise.all(workers.map((w) => w.waitForOutput(WORKER_STARTED, 20_000)))

    const client = createClient({ store })
    const batch: JobSpec[] = Array.from({ length: JOBS / 4 }, (_, i) => ({ name: 'ok', payload: { i } }))
    // Four concurrent batches: the workers are claiming while jobs still arrive.
    await Promise.all([0, 1, 2, 3].map(() => client.enqueueMany(batch)))
    await waitFor(
      async () => (await store.stats()).find((s) => s.queue === 'default')?.completed === JOBS,
      60_000,
      `all ${JOBS} jobs completing`,
      100,
    )
    for (const w of workers) w.child.kill('SIGTERM')
    const exits = await Promise.all(workers.map((w) => w.waitForExit(10_000)))
    for (const exit of exits) assert.equal(exit.code, 0, exit.stderr)

    const jobs = await allJobs(store)
    assert.equal(jobs.length, JOBS)
    const twice = jobs.filter((job) => job.attempts !== 1)
    assert.deepEqual(
      twice.map((job) => `${job.id}: ${job.attempts} attempts`),
      [],
      'every job was claimed exactly once',
    )
    const byPid = new Map<number, number>()
    for (const job of jobs) {
      const { pid } = job.result as { pid: number }
      byPid.set(pid, (byPid.get(pid) ?? 0) + 1)
    }
    t.diagnostic(`jobs per process: ${[...byPid.values()].join(', ')}`)
    assert.ok(byPid.size >= 2, `the work was shared (${byPid.size} process ran jobs)`)
  })
})
