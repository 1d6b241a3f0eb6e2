/**
 * Many worker processes on one Redis namespace: every job is claimed exactly once. Three `ferry
 * work` processes (the built CLI, dist/, which `npm test` builds first, with a plain-JavaScript
 * no-op handler module: a TypeScript loader in each child doubled their start-up) start on an
 * empty namespace, then jobs arrive in batches while they compete for them. A claim counts an
 * attempt, so a job claimed twice would show two attempts.
 */
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { describe, it } from 'node:test'

import { createClient } from '../../src/client/client.js'
import { allJobs } from '../support/store-harness.js'
import { waitFor } from '../support/async.js'
import { defer } from '../support/cleanup.js'
import { REPO_ROOT, WORKER_STARTED } from '../support/processes.js'
import { redisUnreachableReason, tempNamespace, TEST_REDIS_URL } from '../support/redis-harness.js'
import { whenAvailable } from '../support/services.js'

const WORKERS = 3
const JOBS = 2000
const BATCH = 100

await whenAvailable(redisUnreachableReason(), () => {
  describe('RedisStore with many worker processes', () => {
    it('runs every job exactly once', async (t) => {
      const { store, namespace } = await tempNamespace(t, 'exactly-once')
      const url = `${TEST_REDIS_URL}${TEST_REDIS_URL.includes('?') ? '&' : '?'}namespace=${namespace}`

      const children: ChildProcess[] = []
      const ready: Promise<void>[] = []
      for (let i = 0; i < WORKERS; i++) {
        const child = spawn(
          process.execPath,
          [
            join(REPO_ROOT, 'dist', 'cli', 'main.js'),
            '--store',
            url,
            'work',
            '--handlers',
            join(REPO_ROOT, 'bench', 'fixtures', 'noop-handlers.mjs'),
            '--concurrency',
            '8',
            '--time-limit',
            '60s',
          ],
          { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
        )
        children.push(child)
        defer(t, () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
        })
        let stderr = ''
        ready.push(
          new Promise((resolve, reject) => {
            child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
              stderr += chunk
              if (WORKER_STARTED.test(stderr)) resolve()
            })
            child.once('exit', (code) =>
              reject(new Error(`worker exited (${code}) before it ran:\n${stderr}`)),
            )
          }),
        )
      }
      await Promise.all(ready)

      const client = createClient({ store })
      defer(t, () => client.close())
      for (let first = 0; first < JOBS; first += BATCH) {
        await client.enqueueMany(
          Array.from({ length: BATCH }, (_, i) => ({ name: 'bench.noop', payload: { seq: first + i } })),
        )
      }
      await waitFor(
        async () => (await store.stats()).every((q) => q.completed === JOBS),
        30_000,
        'every job completed',
      )
      for (const child of children) child.kill('SIGTERM')

      const jobs = await allJobs(store)
      assert.equal(jobs.length, JOBS)
      const notOnce = jobs.filter((job) => job.state !== 'completed' || job.attempts !== 1)
      assert.deepEqual(
        notOnce.map((job) => `${job.id}: ${job.state}, ${job.attempts} attempts`),
        [],
        'every job completed after exactly one claim',
      )
    })
  })
})
