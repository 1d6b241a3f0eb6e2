import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ValidationError } from '../../src/core/errors.js'
import { ForkExecutor, ProcessesExecutor } from '../../src/worker/executors/pool-executors.js'
import { BROKEN_HANDLERS, capture, completedResult, POOL_HANDLERS, runJob } from './pool-helpers.js'
import { isAlive } from '../support/processes.js'

const quiet = () => ({ stdout: capture().stream, stderr: capture().stream })

test('refuses handlers given as an object, because a child process cannot receive functions', () => {
  assert.throws(
    () => new ProcessesExecutor({ noop: () => null }),
    (error: unknown) =>
      error instanceof ValidationError &&
      error.field === 'handlers' &&
      /processes strategy needs handlers as a module path/.test(error.message),
  )
})

test('runs many jobs in the same child process and recycles it after maxJobsPerChild', async () => {
  const executor = new ProcessesExecutor(POOL_HANDLERS, { size: 1, maxJobsPerChild: 3, ...quiet() })
  await executor.start()
  try {
    const pids: unknown[] = []
    for (let i = 0; i < 6; i++) pids.push(completedResult(await runJob(executor, 'pid')))
    assert.equal(new Set(pids.slice(0, 3)).size, 1, 'the first three jobs share a child')
    assert.equal(new Set(pids.slice(3)).size, 1, 'the next three share its replacement')
    assert.notEqual(pids[0], pids[3])
  } finally {
    await executor.close()
  }
})

test('recycles a child whose RSS passed maxRssBytes after its job', async () => {
  const executor = new ProcessesExecutor(POOL_HANDLERS, {
    size: 1,
    maxRssBytes: 150 * 1024 * 1024,
    ...quiet(),
  })
  await executor.start()
  try {
    const first = completedResult(await runJob(executor, 'grow', { mb: 10 }))
    assert.equal(completedResult(await runJob(executor, 'pid')), first, 'a small child is kept')
    assert.equal(completedResult(await runJob(executor, 'grow', { mb: 200 })), first)
    assert.notEqual(completedResult(await runJob(executor, 'pid')), first, 'a grown child is replaced')
  } finally {
    await executor.close()
  }
})

test('fails a job whose process exits with the exit code and stderr tail, then replaces the child', async () => {
  const executor = new ProcessesExecutor(POOL_HANDLERS, { size: 1, ...quiet() })
  await executor.start()
  try {
    const before = completedResult(await runJob(executor, 'pid'))
    const outcome = await runJob(executor, 'writesStderr')
    assert.equal(outcome.kind, 'failed')
    assert.ok(outcome.kind === 'failed')
    assert.equal(outcome.error.kind, 'crash')
    assert.equal(outcome.error.message, 'the process running the job exited with code 1')
    assert.equal(outcome.error.exitCode, 1)
    assert.equal(outcome.error.signal, null)
    const tail = outcome.error.stderrTail!.split('\n')
    assert.equal(tail.length, 20, 'the tail keeps the last 20 lines')
    assert.equal(tail.at(-1), 'stderr line 30')
    const after = completedResult(await runJob(executor, 'pid'))
    assert.notEqual(after, before)
    assert.equal(isAlive(before as number), false)
  } finally {
    await executor.close()
  }
})

test('reports a child killed by a signal and one out of memory with their real causes', async () => {
  const executor = new ProcessesExecutor(POOL_HANDLERS, { size: 1, maxHeapMb: 64, ...quiet() })
  await executor.start()
  try {
    const killed = await runJob(executor, 'killsSelf')
    assert.ok(killed.kind === 'failed', JSON.stringify(killed))
    assert.equal(killed.error.message, 'the process running the job was killed by SIGKILL')
    assert.equal(killed.error.signal, 'SIGKILL')
    const oom = await runJob(executor, 'oom')
    assert.ok(oom.kind === 'failed', JSON.stringify(oom))
    assert.equal(oom.error.message, 'the process running the job ran out of memory (heap limit 64 MB)')
    assert.match(oom.error.stderrTail!, /heap out of memory/)
    assert.equal(completedResult(await runJob(executor, 'echo', 'still running')), 'still running')
  } finally {
    await executor.close()
  }
})

test('kills a child that blocks its event loop once the abort grace has passed, and says how', async () => {
  const executor = new ProcessesExecutor(POOL_HANDLERS, { size: 1, killGraceMs: 200, ...quiet() })
  await executor.start()
  try {
    const startedAt = Date.now()
    const outcome = await runJob(executor, 'blocksLoop', null, 100)
    assert.ok(outcome.kind === 'aborted', JSON.stringify(outcome))
    assert.deepEqual(
      { message: outcome.killed?.message, signal: outcome.killed?.signal },
      // SIGKILL, not SIGTERM: a child ignores SIGTERM, so that only the pool decides when it dies.
      { message: 'the process running the job was killed by SIGKILL', signal: 'SIGKILL' },
    )
    assert.ok(Date.now() - startedAt >= 300, 'it waited for the grace period')
    // A handler that honours its signal answers the abort itself: no kill.
    const honoured = await runJob(executor, 'honoursAbort', null, 100)
    assert.deepEqual(honoured, { kind: 'aborted' })
    assert.equal(completedResult(await runJob(executor, 'echo', 1)), 1)
  } finally {
    await executor.close()
  }
})

test('rejects start() when the handler module throws at import, and leaves no child behind', async () => {
  const stderr = capture()
  const executor = new ProcessesExecutor(BROKEN_HANDLERS, {
    size: 2,
    stdout: capture().stream,
    stderr: stderr.stream,
  })
  await assert.rejects(
    executor.start(),
    /processes executor cannot start: .*this module is broken on purpose/,
  )
  assert.equal(executor.childCount, 0)
})

test('backs off between replacements that fail to start, then recovers', async () => {
  const stderr = capture()
  const executor = new ProcessesExecutor(POOL_HANDLERS, {
    size: 1,
    stdout: capture().stream,
    stderr: stderr.stream,
  })
  await executor.start()
  try {
    process.env.POOL_HANDLERS_REFUSE_TO_LOAD = '1'
    const crashed = await runJob(executor, 'exits')
    assert.equal(crashed.kind, 'failed')
    const queued = runJob(executor, 'echo', 'after the backoff')
    // Let a few replacements fail (each start takes a while under tsx), then let them load.
    await waitFor(() => (stderr.text().match(/failed to start/g) ?? []).length >= 2)
    delete process.env.POOL_HANDLERS_REFUSE_TO_LOAD
    assert.equal(completedResult(await queued), 'after the backoff')
    const delays = [...stderr.text().matchAll(/retrying in (\d+) ms/g)].map((match) => Number(match[1]))
    assert.deepEqual(delays.slice(0, 2), [100, 200])
  } finally {
    delete process.env.POOL_HANDLERS_REFUSE_TO_LOAD
    await executor.close()
  }
})

test('streams each line of child output prefixed with the id of the job that wrote it', async () => {
  const stdout = capture()
  const executor = new ProcessesExecutor(POOL_HANDLERS, {
    size: 1,
    stdout: stdout.stream,
    stderr: capture().stream,
  })
  await executor.start()
  try {
    const abortless = await runJob(executor, 'logs', { lines: ['first line', 'second line'] })
    assert.equal(completedResult(abortless), 2)
    await waitFor(() => stdout.text().includes('second line'))
    assert.match(stdout.text(), /^\[job \d+\] first line\n\[job \d+\] second line\n$/)
  } finally {
    await executor.close()
  }
})

test('close() aborts running jobs and leaves no child process behind', async () => {
  const executor = new ProcessesExecutor(POOL_HANDLERS, { size: 2, killGraceMs: 200, ...quiet() })
  await executor.start()
  const pids = [
    completedResult(await runJob(executor, 'pid')),
    completedResult(await runJob(executor, 'pid')),
  ]
  const stuck = runJob(executor, 'blocksLoop')
  await new Promise((resolve) => setTimeout(resolve, 50))
  await executor.close()
  assert.equal((await stuck).kind, 'aborted')
  assert.equal(executor.childCount, 0)
  for (const pid of pids) assert.equal(isAlive(pid as number), false, `process ${pid} is gone`)
})

test('fork runs every job in a fresh process', async () => {
  const executor = new ForkExecutor(POOL_HANDLERS, { size: 2, ...quiet() })
  await executor.start()
  try {
    const pids = []
    for (let i = 0; i < 3; i++) pids.push(completedResult(await runJob(executor, 'pid')))
    assert.equal(new Set(pids).size, 3)
    const crashed = await runJob(executor, 'exits')
    assert.ok(crashed.kind === 'failed' && crashed.error.exitCode === 3, JSON.stringify(crashed))
  } finally {
    await executor.close()
  }
  assert.equal(executor.childCount, 0)
})

async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  // Output arrives through streams this test does not own: check after each turn of the loop.
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a condition')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
