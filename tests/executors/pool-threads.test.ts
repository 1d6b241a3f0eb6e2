import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ThreadsExecutor } from '../../src/worker/executors/pool-executors.js'
import { BROKEN_HANDLERS, capture, completedResult, POOL_HANDLERS, runJob } from './pool-helpers.js'

const quiet = () => ({ stdout: capture().stream, stderr: capture().stream })

test('runs jobs off the main thread and recycles a thread after maxJobsPerChild', async () => {
  const executor = new ThreadsExecutor(POOL_HANDLERS, { size: 1, maxJobsPerChild: 2, ...quiet() })
  await executor.start()
  try {
    const places = []
    for (let i = 0; i < 4; i++) places.push(completedResult(await runJob(executor, 'where')))
    const [pid] = String(places[0]).split(':')
    assert.equal(Number(pid), process.pid, 'threads share the process')
    assert.notEqual(places[0], `${process.pid}:0`, 'not the main thread')
    assert.equal(places[0], places[1])
    assert.equal(places[2], places[3])
    assert.notEqual(places[1], places[2])
  } finally {
    await executor.close()
  }
})

test('fails a job whose thread exits or runs out of heap, and replaces the thread', async () => {
  const executor = new ThreadsExecutor(POOL_HANDLERS, { size: 1, maxHeapMb: 32, ...quiet() })
  await executor.start()
  try {
    const exited = await runJob(executor, 'exits')
    assert.ok(exited.kind === 'failed', JSON.stringify(exited))
    assert.deepEqual(
      { kind: exited.error.kind, message: exited.error.message, exitCode: exited.error.exitCode },
      { kind: 'crash', message: 'the thread running the job exited with code 3', exitCode: 3 },
    )
    const oom = await runJob(executor, 'oom')
    assert.ok(oom.kind === 'failed', JSON.stringify(oom))
    assert.equal(oom.error.message, 'the thread running the job ran out of memory (heap limit 32 MB)')
    assert.equal(completedResult(await runJob(executor, 'echo', 'still running')), 'still running')
  } finally {
    await executor.close()
  }
})

test('terminates a thread that blocks its event loop after the abort grace', async () => {
  const executor = new ThreadsExecutor(POOL_HANDLERS, { size: 1, killGraceMs: 200, ...quiet() })
  await executor.start()
  try {
    const outcome = await runJob(executor, 'blocksLoop', null, 100)
    assert.ok(outcome.kind === 'aborted', JSON.stringify(outcome))
    assert.equal(outcome.killed?.message, 'the thread running the job was terminated')
    assert.equal(completedResult(await runJob(executor, 'echo', 2)), 2)
  } finally {
    await executor.close()
  }
  assert.equal(executor.childCount, 0)
})

test('rejects start() when the handler module throws at import', async () => {
  const executor = new ThreadsExecutor(BROKEN_HANDLERS, { size: 2, ...quiet() })
  await assert.rejects(executor.start(), /threads executor cannot start: .*this module is broken on purpose/)
  assert.equal(executor.childCount, 0)
})

test('prefixes a thread output line with the id of its job', async () => {
  const stdout = capture()
  const executor = new ThreadsExecutor(POOL_HANDLERS, {
    size: 1,
    stdout: stdout.stream,
    stderr: capture().stream,
  })
  await executor.start()
  try {
    assert.equal(completedResult(await runJob(executor, 'logs', { lines: ['from a thread'] })), 1)
  } finally {
    await executor.close()
  }
  // Output and outcome travel separately; close() waited for the thread, so its output is in.
  assert.match(stdout.text(), /^\[job \d+\] from a thread\n$/)
})
