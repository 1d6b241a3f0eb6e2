/**
 * The execution strategies end to end: a Worker built with `strategy` (so it makes its own pool of
 * `concurrency` children) on a real SQLite file, running the misbehaving fixture handlers of
 * tests/support/handlers. What each strategy does with one attempt is the conformance
 * suite's business (tests/conformance/executor.case.ts); here the worker must live on and store
 * each job's real cause.
 */
import { join } from 'node:path'
import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'

import { createClient, type Job, type Worker, type WorkerEvents } from '../../src/index.js'
import { waitFor, within } from '../support/async.js'
import { isAlive, readPid, runFerry, spawnFerry } from '../support/processes.js'
import { tempStore } from '../support/sqlite-harness.js'
import { getExistingJob } from '../support/store-calls.js'
import { allJobs } from '../support/store-harness.js'
import { createWorker, fixtureHandlers, stopWorker } from '../support/workers.js'

type Strategy = 'inline' | 'threads' | 'processes' | 'fork'

const CRASHING_JOBS = 100
/**
 * How long the crashing jobs may take before the test calls the worker hung. Each crash costs a
 * new child, and a child of the TypeScript sources loads tsx first: about 0.4 s of CPU, where a
 * child of the build takes 0.09 s. Beside another test file on this 2-core machine, 100 of them
 * once took past 120 s under `processes`.
 */
const CRASHES_WITHIN_MS = 300_000
const GOOD_JOBS = 10

/** Why inline cannot run a test: its handlers share the worker's process and event loop. */
const INLINE_CANNOT = {
  crash: "process.exit in an inline handler exits the worker's own process",
  timeout: "a handler that blocks the event loop blocks the worker's: no timer fires to abort it",
}

/** Resolves once the worker emitted `name` `count` times (counted from now). */
function countEvents(
  worker: Worker,
  name: keyof WorkerEvents,
  count: number,
  timeoutMs: number,
): Promise<void> {
  let seen = 0
  let listener!: () => void
  const done = new Promise<void>((resolve) => {
    listener = () => {
      if (++seen === count) resolve()
    }
    worker.on(name, listener)
  })
  return within(timeoutMs, () => `${count} '${name}' events (saw ${seen})`, done).finally(() =>
    worker.off(name, listener),
  )
}

async function setup(t: TestContext, strategy: Strategy, fixture: string, concurrency: number) {
  const temp = await tempStore(t)
  const client = createClient({ store: temp.store })
  const started = createWorker(t, {
    store: temp.store,
    handlers: fixtureHandlers(fixture),
    strategy,
    concurrency,
    backoff: { baseMs: 10, maxMs: 20 },
  })
  return { ...temp, client, ...started }
}

for (const strategy of ['inline', 'threads', 'processes', 'fork'] as const) {
  describe(`a worker with the ${strategy} strategy`, () => {
    test(
      `survives ${CRASHING_JOBS} jobs in a row that call process.exit, stores each crash and then completes good jobs`,
      strategy === 'inline' ? { skip: INLINE_CANNOT.crash } : {},
      async (t) => {
        const { worker, errors, client, store } = await setup(t, strategy, 'exits.mjs', 4)
        // A few may retry once: a crash is a failed attempt like any other.
        const crashing = await client.enqueueMany(
          Array.from({ length: CRASHING_JOBS }, (_, i) => ({
            name: 'exits',
            payload: { i },
            options: { maxAttempts: i % 20 === 0 ? 2 : 1 },
          })),
        )
        const retries = crashing.filter((_, i) => i % 20 === 0).length
        const allDead = countEvents(worker, 'job:dead', CRASHING_JOBS, CRASHES_WITHIN_MS)
        const allRetried = countEvents(worker, 'job:failed', retries, CRASHES_WITHIN_MS)
        await worker.start()
        await Promise.all([allDead, allRetried])

        const good = await client.enqueueMany(
          Array.from({ length: GOOD_JOBS }, (_, i) => ({ name: 'ok', payload: { good: i } })),
        )
        const allCompleted = countEvents(worker, 'job:completed', GOOD_JOBS, 30_000)
        await allCompleted

        for (const { id } of crashing) {
          const job = await getExistingJob(store, id)
          assert.equal(job.state, 'dead', `job ${id}`)
          assert.equal(job.lastError?.kind, 'crash', `job ${id}: ${JSON.stringify(job.lastError)}`)
          assert.equal(job.lastError.exitCode, 3, `job ${id}: ${JSON.stringify(job.lastError)}`)
        }
        for (const [i, { id }] of good.entries()) {
          const job = await getExistingJob(store, id)
          assert.equal(job.state, 'completed')
          assert.deepEqual((job.result as { payload: unknown }).payload, { good: i })
        }
        assert.deepEqual(worker.counts, {
          claimed: CRASHING_JOBS + retries + GOOD_JOBS,
          completed: GOOD_JOBS,
          failed: retries,
          dead: CRASHING_JOBS,
          snoozed: 0,
          leaseLost: 0,
        })
        assert.deepEqual(errors, [])
        assert.equal(await stopWorker(worker), 'requested')
      },
    )

    test(
      'kills a job that blocks its event loop past its timeout, stores the timeout and runs the next job',
      strategy === 'inline' ? { skip: INLINE_CANNOT.timeout } : {},
      async (t) => {
        const { worker, errors, client, store, dir } = await setup(t, strategy, 'blocks-loop.mjs', 1)
        const pidFile = join(dir, 'blocks-loop.pid')
        const { id: stuck } = await client.enqueue(
          'blocks-loop',
          { pidFile },
          { timeoutMs: 200, maxAttempts: 1 },
        )
        const { id: next } = await client.enqueue('ok', { after: 'timeout' })
        const nextCompleted = countEvents(worker, 'job:completed', 1, 20_000)
        await worker.start()
        await nextCompleted

        const timedOut = await getExistingJob(store, stuck)
        assert.equal(timedOut.state, 'dead')
        assert.equal(timedOut.lastError?.kind, 'timeout', JSON.stringify(timedOut.lastError))
        assert.equal(timedOut.lastError.timeoutMs, 200)
        assert.match(timedOut.lastError.message, /timed out after 200 ms/)
        const pid = readPid(pidFile)
        assert.ok(pid !== null, 'the handler ran and wrote its pid')
        if (pid !== process.pid) {
          // The attempt ran in a child process: it is gone (a thread's end shows in the next job running).
          await waitFor(() => !isAlive(pid), 5000, `process ${pid} being killed`)
        }
        const completed: Job = await getExistingJob(store, next)
        assert.equal(completed.state, 'completed')
        assert.deepEqual((completed.result as { payload: unknown }).payload, { after: 'timeout' })
        assert.deepEqual(errors, [])
        assert.equal(await stopWorker(worker), 'requested')
        assert.equal((await allJobs(store)).length, 2)
      },
    )
  })
}

describe('ferry work --strategy', () => {
  test('runs jobs in child processes and replaces a child after --max-jobs-per-child jobs', async (t) => {
    const { store, url } = await tempStore(t)
    const ids = (
      await createClient({ store }).enqueueMany([1, 2, 3].map((n) => ({ name: 'ok', payload: { n } })))
    ).map(({ id }) => id)
    const ferry = spawnFerry(t, [
      '--store',
      url,
      'work',
      '--handlers',
      fixtureHandlers('ok.mjs'),
      '--strategy',
      'processes',
      '--concurrency',
      '1',
      '--max-jobs-per-child',
      '1',
      '--limit',
      '3',
    ])
    const exit = await ferry.waitForExit(30_000)
    assert.equal(exit.code, 0, exit.stderr)
    assert.match(exit.stderr, /strategy processes/)
    const pids = new Set<number>()
    for (const id of ids) {
      const job = await getExistingJob(store, id)
      assert.equal(job.state, 'completed', JSON.stringify(job.lastError))
      const { pid } = job.result as { pid: number }
      assert.notEqual(pid, ferry.child.pid, 'the job ran in a child, not in the worker process')
      pids.add(pid)
    }
    assert.equal(pids.size, 3, 'each child ran one job')
  })

  test('refuses an unknown strategy and recycling options for strategies that keep no children', async (t) => {
    const { url } = await tempStore(t)
    const work = (...args: string[]) =>
      runFerry(t, ['--store', url, 'work', '--handlers', fixtureHandlers('ok.mjs'), ...args])
    const unknown = await work('--strategy', 'cluster')
    assert.equal(unknown.code, 2)
    assert.match(
      unknown.stderr,
      /--strategy: "cluster" is not a strategy \(use inline, threads, processes, fork\)/,
    )
    const inline = await work('--max-jobs-per-child', '10')
    assert.equal(inline.code, 2)
    assert.match(inline.stderr, /--max-jobs-per-child: applies to --strategy threads or processes only/)
    const fork = await work('--strategy', 'fork', '--max-rss', '256MB')
    assert.equal(fork.code, 2)
    assert.match(fork.stderr, /--max-rss: applies to --strategy threads or processes only/)
  })
})
