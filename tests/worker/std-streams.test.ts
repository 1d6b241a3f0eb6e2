/**
 * A handler may do anything to the standard streams of the process it runs in, and under
 * `--strategy inline` that is the worker's: end or destroy stderr or stdout, close fd 2. The worker
 * must keep running jobs, record every outcome and exit 0 at its --limit; its own lines still go
 * out while fd 2 is open, and are dropped, never written elsewhere, once it is not.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { createClient, type JobSpec } from '../../src/index.js'
import { logMessages, runFerry, spawnFerry, WORKER_STARTED } from '../support/processes.js'
import { tempStore } from '../support/sqlite-harness.js'
import { allJobs } from '../support/store-harness.js'
import { fixtureHandlers } from '../support/workers.js'

const HANDLERS = fixtureHandlers('std-streams.mjs')

/** The jobs run after the misbehaving one: output through both streams, a death, a completion. */
const AFTERWARDS: JobSpec[] = [
  { name: 'print', payload: { text: 'after the streams were touched' } },
  { name: 'fail', payload: { message: 'failed on purpose' }, options: { maxAttempts: 1 } },
  { name: 'print', payload: { text: 'still printing' } },
  { name: 'ok', payload: null },
]

function inlineWorker(url: string, limit: number): string[] {
  return [
    '--store',
    url,
    'work',
    '--handlers',
    HANDLERS,
    '--strategy',
    'inline',
    '--concurrency',
    '1',
  ].concat(['--limit', String(limit)])
}

/** What each misbehaving handler returns. */
const RESULT_OF: Record<string, string> = {
  'end-stderr': 'ended stderr',
  'destroy-stderr': 'destroyed stderr',
  'end-stdout': 'ended stdout',
  'destroy-stdout': 'destroyed stdout',
}

for (const misbehaviour of Object.keys(RESULT_OF)) {
  const [method, stream] = misbehaviour.split('-')
  test(`a worker whose inline handler calls process.${stream}.${method}() keeps running jobs, records them and exits 0`, async (t) => {
    const { store, url } = await tempStore(t)
    // One queue, one priority, concurrency 1: the jobs run one after another in enqueue order.
    await createClient({ store }).enqueueMany([{ name: misbehaviour, payload: null }, ...AFTERWARDS])
    const exit = await runFerry(t, inlineWorker(url, 5))

    assert.equal(exit.code, 0, exit.stderr)
    const jobs = await allJobs(store)
    assert.deepEqual(
      jobs.map((job) => [job.name, job.state, job.result]),
      [
        [misbehaviour, 'completed', RESULT_OF[misbehaviour]],
        ['print', 'completed', 'after the streams were touched'],
        ['fail', 'dead', null],
        ['print', 'completed', 'still printing'],
        ['ok', 'completed', 'ok'],
      ],
    )
    assert.equal(jobs[2]!.lastError?.message, 'failed on purpose')
    // The worker's own lines go to fd 2 itself. Ending stderr shuts down the socket the test
    // reads it through, so after that nothing can be written there and the lines are dropped.
    if (misbehaviour !== 'end-stderr') {
      const messages = logMessages(exit.stderr)
      assert.match(messages, /^job \d+ fail is dead after attempt 1: failed on purpose$/m)
      assert.match(messages, /^stopped \(job-limit\): 4 completed, 0 failed and retried, 1 dead/m)
    }
  })
}

test('a worker whose inline handler closes fd 2 and opens a file in its place writes none of its lines to that file', async (t) => {
  const { store, url, dir } = await tempStore(t)
  const takeOver = join(dir, 'took-fd-2.txt')
  await createClient({ store }).enqueueMany([
    { name: 'close-stderr-fd', payload: { path: takeOver } },
    { name: 'fail', payload: { message: 'failed on purpose' }, options: { maxAttempts: 1 } },
    { name: 'ok', payload: null },
  ])
  const ferry = spawnFerry(t, inlineWorker(url, 3))
  await ferry.waitForOutput(WORKER_STARTED)
  const exit = await ferry.waitForExit()

  assert.equal(exit.code, 0, exit.stderr)
  const jobs = await allJobs(store)
  // The file the handler opened took number 2, where the worker's log lines went before.
  assert.deepEqual(
    jobs.map((job) => [job.name, job.state, job.result]),
    [
      ['close-stderr-fd', 'completed', 2],
      ['fail', 'dead', null],
      ['ok', 'completed', 'ok'],
    ],
  )
  assert.equal(readFileSync(takeOver, 'utf8'), '', 'the worker wrote its lines into the file that took fd 2')
  // Lines after the close could not be written anywhere: dropped.
  assert.doesNotMatch(exit.stderr, /is dead|stopped/)
})

test('a worker whose stdout reader went away keeps running jobs that print, and forwards what its children print', async (t) => {
  const { store, url } = await tempStore(t)
  const prints: JobSpec[] = [1, 2, 3, 4].map((n) => ({ name: 'print', payload: { text: `line ${n}` } }))
  await createClient({ store }).enqueueMany(prints)
  const ferry = spawnFerry(t, [
    '--store',
    url,
    'work',
    '--handlers',
    HANDLERS,
    '--strategy',
    'processes',
    '--concurrency',
    '1',
    '--limit',
    '4',
  ])
  // Before any job runs: every line a child prints is forwarded to a stdout nobody reads (EPIPE).
  ferry.child.stdout!.destroy()
  const exit = await ferry.waitForExit(30_000)

  assert.equal(exit.code, 0, exit.stderr)
  assert.deepEqual(
    (await allJobs(store)).map((job) => [job.state, job.result]),
    [1, 2, 3, 4].map((n) => ['completed', `line ${n}`]),
  )
  assert.match(exit.stderr, /^\[job \d+\] stderr: line 4$/m)
  assert.match(logMessages(exit.stderr), /^stopped \(job-limit\): 4 completed/m)
})
