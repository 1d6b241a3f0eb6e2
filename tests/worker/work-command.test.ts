/**
 * `ferry work` and `ferry demo` as real processes on temp SQLite files: waking on a job enqueued
 * by another process, the --limit, --time-limit and --memory-limit stops, the handler module
 * formats it loads (and the one-line errors for those it cannot), and the README's demo.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { createClient, type JobSpec } from '../../src/index.js'
import type { ScriptPayload } from '../support/handlers/scripted.js'
import { waitFor, waitForEvent } from '../support/async.js'
import { type Exit, logRecords, runFerry, spawnFerry, WORKER_STARTED } from '../support/processes.js'
import { tempStore } from '../support/sqlite-harness.js'
import { getExistingJob } from '../support/store-calls.js'
import { allJobs } from '../support/store-harness.js'
import { createWorker, fixtureHandlers, stopWorker } from '../support/workers.js'

const SCRIPTED = fixtureHandlers('scripted.ts')

function quick(result: unknown): JobSpec {
  const payload: ScriptPayload = { steps: [{ result }] }
  return { name: 'script', payload }
}

/** The state of every job, in enqueue order. */
async function statesOf(store: Parameters<typeof allJobs>[0]): Promise<string[]> {
  return (await allJobs(store)).map((job) => job.state)
}

/** Asserts that ferry failed with exit code 2 and one line of error, no stack trace. */
function assertOneLineError(exit: Exit, pattern: RegExp): void {
  assert.equal(exit.code, 2, exit.stderr)
  const text = exit.stderr.trimEnd()
  assert.ok(!text.includes('\n'), `more than one line on stderr:\n${exit.stderr}`)
  assert.match(text, /^ferry: /)
  assert.match(text, pattern)
}

test('an idle ferry work process runs a job enqueued by another process within 2 s', async (t) => {
  const { store, url } = await tempStore(t)
  const ferry = spawnFerry(t, ['--store', url, 'work', '--handlers', SCRIPTED])
  await ferry.waitForOutput(WORKER_STARTED)

  const enqueuedAt = Date.now()
  const { id } = await createClient({ store }).enqueue('script', { steps: [{ result: 'woke up' }] })
  await waitFor(
    async () => (await getExistingJob(store, id)).state === 'completed',
    5000,
    'the job completing',
    5,
  )
  const latencyMs = Date.now() - enqueuedAt
  t.diagnostic(`completed ${latencyMs} ms after the enqueue`)
  assert.ok(latencyMs <= 2000, `the job completed ${latencyMs} ms after the enqueue`)
  assert.equal((await getExistingJob(store, id)).result, 'woke up')

  ferry.child.kill('SIGTERM')
  assert.equal((await ferry.waitForExit(5000)).code, 0)
})

for (const extra of [[], ['--concurrency', '1', '--prefetch', '3']]) {
  test(`ferry work --limit 2 ${extra.join(' ')} stops after two jobs and leaves the rest ready, attempts unused`, async (t) => {
    const { store, url } = await tempStore(t)
    await createClient({ store }).enqueueMany([1, 2, 3, 4, 5, 6].map(quick))
    const exit = await runFerry(t, ['--store', url, 'work', '--handlers', SCRIPTED, '--limit', '2', ...extra])

    assert.equal(exit.code, 0, exit.stderr)
    assert.match(exit.stderr, /stopped \(job-limit\): 2 completed/)
    // With --prefetch, jobs it held beyond the limit went back unused.
    assert.deepEqual(await statesOf(store), ['completed', 'completed', 'ready', 'ready', 'ready', 'ready'])
    assert.ok((await allJobs(store)).slice(2).every((job) => job.attempts === 0))
  })
}

test('ferry work refuses a prefetch that is neither auto nor a whole number from 0, in one line, exit 2', async (t) => {
  const { url } = await tempStore(t)
  const exit = await runFerry(t, ['--store', url, 'work', '--handlers', SCRIPTED, '--prefetch', '-1'])
  assertOneLineError(exit, /prefetch: must be 'auto' or an integer from 0 to 10000/)
  const typo = await runFerry(t, ['--store', url, 'work', '--handlers', SCRIPTED, '--prefetch', 'atuo'])
  assertOneLineError(typo, /--prefetch: "atuo" is not 'auto' or an integer/)
})

test('ferry work --time-limit 1s stops after a second', async (t) => {
  const { url } = await tempStore(t)
  const ferry = spawnFerry(t, ['--store', url, 'work', '--handlers', SCRIPTED, '--time-limit', '1s'])
  await ferry.waitForOutput(WORKER_STARTED)
  const startedAt = Date.now()
  const exit = await ferry.waitForExit(5000)
  const ranMs = Date.now() - startedAt

  assert.equal(exit.code, 0, exit.stderr)
  assert.match(exit.stderr, /stopped \(time-limit\)/)
  assert.ok(ranMs >= 900 && ranMs <= 3000, `stopped ${ranMs} ms after starting`)
})

test('ferry work --memory-limit below its own footprint stops after the first job', async (t) => {
  const { store, url } = await tempStore(t)
  await createClient({ store }).enqueueMany([1, 2, 3].map(quick))
  const exit = await runFerry(t, [
    '--store',
    url,
    'work',
    '--handlers',
    SCRIPTED,
    '--concurrency',
    '1',
    '--memory-limit',
    '1MB',
  ])

  assert.equal(exit.code, 0, exit.stderr)
  assert.match(exit.stderr, /stopped \(memory-limit\): 1 completed/)
  assert.deepEqual(await statesOf(store), ['completed', 'ready', 'ready'])
})

test('a worker loads .mjs and .js handler modules whose default export is a plain object', async (t) => {
  const { store } = await tempStore(t)
  const client = createClient({ store })
  // A queue each, so neither worker meets the other's job.
  const { id: mjsId } = await client.enqueue('plain-mjs', { n: 1 }, { queue: 'mjs' })
  const { id: jsId } = await client.enqueue('plain-js', { n: 2 }, { queue: 'js' })

  for (const format of ['mjs', 'js']) {
    const { worker, errors } = createWorker(t, {
      store,
      queues: [format],
      handlers: fixtureHandlers(`plain.${format}`),
    })
    const completed = waitForEvent(worker, 'job:completed')
    await worker.start()
    await completed
    await stopWorker(worker)
    assert.deepEqual([...worker.jobNames], [`plain-${format}`])
    assert.deepEqual(errors, [])
  }
  assert.deepEqual((await getExistingJob(store, mjsId)).result, {
    format: 'mjs',
    payload: { n: 1 },
    attempt: 1,
  })
  assert.deepEqual((await getExistingJob(store, jsId)).result, { format: 'js', payload: { n: 2 } })
})

test('ferry work runs a TypeScript handler module', async (t) => {
  const { store, url } = await tempStore(t)
  const { id } = await createClient({ store }).enqueue('greet', { name: 'Ada' })
  const exit = await runFerry(t, [
    '--store',
    url,
    'work',
    '--handlers',
    fixtureHandlers('typed.ts'),
    '--limit',
    '1',
  ])

  assert.equal(exit.code, 0, exit.stderr)
  const started = logRecords(exit.stderr).find((record) => record.event === 'worker:started')
  assert.deepEqual(started?.jobNames, ['greet'], exit.stderr)
  const job = await getExistingJob(store, id)
  assert.equal(job.state, 'completed')
  assert.deepEqual(job.result, { greeting: 'hello Ada' })
})

test('ferry work refuses a module whose default export is not an object, in one line, exit 2', async (t) => {
  const { url } = await tempStore(t)
  const module = fixtureHandlers('not-an-object.mjs')
  const exit = await runFerry(t, ['--store', url, 'work', '--handlers', module])
  assertOneLineError(exit, /must be an object mapping job names to handler functions/)
  assert.ok(exit.stderr.includes(module), exit.stderr)
})

test('ferry work refuses a recovery interval that is not a duration, in one line, exit 2', async (t) => {
  const { url } = await tempStore(t)
  const exit = await runFerry(t, [
    '--store',
    url,
    'work',
    '--handlers',
    SCRIPTED,
    '--recover-interval',
    'soon',
  ])
  assertOneLineError(exit, /--recover-interval/)
})

test('ferry work refuses a handler module that does not exist, in one line, exit 2', async (t) => {
  const { url } = await tempStore(t)
  const missing = fixtureHandlers('no-such-module.mjs')
  const exit = await runFerry(t, ['--store', url, 'work', '--handlers', missing])
  assertOneLineError(exit, /no handler module at/)
  assert.ok(exit.stderr.includes(missing), exit.stderr)
})

test("the README's ferry demo exits 0 and leaves 300 completed and 1 dead demo job", async (t) => {
  const { store, url } = await tempStore(t)
  const exit = await runFerry(t, ['--store', url, 'demo'], 30_000)

  assert.equal(exit.code, 0, exit.stderr)
  assert.match(exit.stdout, /Done in \d+\.\d+ s: 300 completed/)
  // `ferry` is on no PATH after `npm install`: the hint must run as printed.
  assert.match(exit.stdout, /Look around: npx ferry stats/)
  const jobs = await allJobs(store)
  assert.equal(jobs.length, 301)
  assert.equal(jobs.filter((job) => job.state === 'completed').length, 300)
  const dead = jobs.filter((job) => job.state === 'dead')
  assert.deepEqual(
    dead.map((job) => [job.name, job.lastError?.kind]),
    [['demo.build-report', 'permanent']],
  )
  assert.ok(jobs.every((job) => job.name.startsWith('demo.')))
})
