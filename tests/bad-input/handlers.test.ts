/**
 * Bad handlers, on every store and under every execution strategy: each misbehaviour ends its job
 * in the defined outcome, with the cause stored on the job, and the worker lives on to run the
 * next job. Where a misbehaviour takes the worker's own process with it (inline: exit, SIGKILL,
 * out of memory, a blocked loop; threads: SIGKILL), the job comes back when its lease expires,
 * the attempt counted, and a job that keeps killing its worker ends dead instead of crash-looping.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { describe, test, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'

import { createClient, type Job, type JobError, type Store } from '../../src/index.js'
import { createExecutor, type ExecutionStrategy } from '../../src/worker/executors/create-executor.js'
import { allJobs } from '../support/store-harness.js'
import { waitFor, within } from '../support/async.js'
import { readPid } from '../support/processes.js'
import { createWorker, stopWorker } from '../support/workers.js'
import { freshStore, STORES, urlOf, type StoreUnderTest } from '../support/stores.js'
import { getJob } from '../support/store-calls.js'

const BAD_HANDLERS = fileURLToPath(new URL('../support/handlers/bad-input.mjs', import.meta.url))
const FERRY_MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url))
const TIMEOUT_MS = 500
/** Out-of-memory attempts first fill the heap (128 MB in these tests). */
const SETTLE_WITHIN_MS = 60_000

interface Expectation {
  name: string
  /** What the job's lastError must say. */
  check: (error: JobError) => void
  timeoutMs?: number
}

const nonError = (pattern: RegExp) => (error: JobError) => {
  assert.equal(error.kind, 'non_error', JSON.stringify(error))
  assert.match(error.message, pattern)
}

/** What every strategy can run in the worker's process without losing it. */
const SURVIVABLE: Expectation[] = [
  { name: 'throws-string', check: nonError(/a plain string, not an Error/) },
  { name: 'throws-number', check: nonError(/42/) },
  { name: 'throws-null', check: nonError(/null/) },
  { name: 'throws-undefined', check: nonError(/undefined/) },
  { name: 'throws-cycle', check: nonError(/./) },
  { name: 'rejects-non-error', check: nonError(/E_NOT_AN_ERROR/) },
  {
    name: 'never-resolves',
    timeoutMs: TIMEOUT_MS,
    check: (error) => {
      assert.equal(error.kind, 'timeout', JSON.stringify(error))
      assert.equal(error.timeoutMs, TIMEOUT_MS)
    },
  },
]

/**
 * Names the worker has no handler for, among them what every object inherits (never taken for
 * handlers): the worker never claims their jobs, which stay ready, attempts unused.
 */
const UNHANDLED = ['no-such-handler', 'constructor', 'toString', '__proto__', 'hasOwnProperty']

/** Thrown values that break a naive description of them; their outcome is still a failure of the handler's own. */
const HOSTILE_THROWS: Expectation[] = [
  {
    name: 'throws-bad-getter',
    check: (error) => assert.ok(['error', 'non_error'].includes(error.kind), JSON.stringify(error)),
  },
  { name: 'throws-null-prototype-cycle', check: nonError(/./) },
]
/** What an isolating strategy survives because the handler runs in a child it can lose. */
const ISOLATED: Record<Exclude<ExecutionStrategy, 'inline'>, Expectation[]> = {
  threads: [],
  processes: [],
  fork: [],
}
const timedOutAndKilled: Expectation = {
  name: 'blocks-loop',
  timeoutMs: TIMEOUT_MS,
  check: (error) => assert.equal(error.kind, 'timeout', JSON.stringify(error)),
}
const exited: Expectation = {
  name: 'exits',
  check: (error) => {
    assert.equal(error.kind, 'crash', JSON.stringify(error))
    assert.equal(error.exitCode, 3)
  },
}
const killedItself: Expectation = {
  name: 'kills-self',
  check: (error) => {
    assert.equal(error.kind, 'crash', JSON.stringify(error))
    assert.equal(error.signal, 'SIGKILL')
  },
}
const ranOutOfMemory: Expectation = {
  name: 'oom',
  check: (error) => {
    assert.equal(error.kind, 'crash', JSON.stringify(error))
    assert.match(error.message, /memory/i)
  },
}
// process.kill(process.pid) in a thread signals the worker's own process: tested below, out of process.
ISOLATED.threads.push(timedOutAndKilled, exited, ranOutOfMemory)
ISOLATED.processes.push(timedOutAndKilled, exited, killedItself, ranOutOfMemory)
ISOLATED.fork.push(timedOutAndKilled, exited, killedItself, ranOutOfMemory)

const STRATEGIES: ExecutionStrategy[] = ['inline', 'threads', 'processes', 'fork']

for (const storeUnderTest of STORES) {
  describe(`bad handlers on ${storeUnderTest.name}`, { skip: storeUnderTest.skip }, () => {
    for (const strategy of STRATEGIES) {
      const expectations = [...SURVIVABLE, ...(strategy === 'inline' ? [] : ISOLATED[strategy])]
      test(`under ${strategy}, each bad handler's job ends dead with its cause, the worker runs the next job, and leaves jobs it has no handler for in line`, async (t) => {
        await runToTheEnd(t, storeUnderTest, strategy, expectations, UNHANDLED)
      })
      test(`under ${strategy}, a thrown value whose description throws still fails only its job, as the handler's failure`, async (t) => {
        await runToTheEnd(t, storeUnderTest, strategy, HOSTILE_THROWS)
      })
    }

    describe('a handler that takes its worker process with it', () => {
      const cases: { strategy: ExecutionStrategy; name: string; env?: Record<string, string> }[] = [
        { strategy: 'inline', name: 'exits' },
        { strategy: 'inline', name: 'kills-self' },
        // A small heap, so the worker runs out of memory quickly.
        { strategy: 'inline', name: 'oom', env: { NODE_OPTIONS: '--max-old-space-size=64' } },
        { strategy: 'threads', name: 'kills-self' },
      ]
      for (const { strategy, name, env } of cases) {
        test(`${name} under ${strategy}: each restart recovers the job with the attempt counted, until it is dead`, async (t) => {
          const harness = await freshStore(t, storeUnderTest)
          const { store } = harness
          const maxAttempts = 2
          const { id } = await createClient({ store }).enqueue(name, null, { maxAttempts })
          let deaths = 0
          // A supervisor (systemd, a container runtime) restarts the worker each time it dies.
          const job = await within(
            90_000,
            `the ${name} job becoming dead`,
            (async (): Promise<Job> => {
              for (;;) {
                const current = (await getJob(store, id))!
                if (current.state === 'dead') return current
                assert.ok(
                  deaths <= maxAttempts,
                  `the worker died ${deaths} times: the job must be dead by now`,
                )
                await waitForLeaseEnd(store, id)
                const exit = await runWorkerUntil(t, urlOf(harness), strategy, env, () => isDead(store, id))
                if (exit !== 'stopped') deaths++
              }
            })(),
          )
          assert.equal(deaths, maxAttempts, 'the worker died once per attempt')
          assert.equal(job.attempts, maxAttempts)
          assert.equal(job.lastError?.kind, 'lease_expired', JSON.stringify(job.lastError))
        })
      }

      test('blocks-loop under inline: the job is recovered once the lease expires, with the cause stored', async (t) => {
        const harness = await freshStore(t, storeUnderTest)
        const { store } = harness
        const dir = mkdtempSync(join(tmpdir(), 'ferry-bad-input-'))
        t.after(() => rmSync(dir, { recursive: true, force: true }))
        const pidFile = join(dir, 'pid')
        const { id } = await createClient({ store }).enqueue('blocks-loop', { pidFile }, { maxAttempts: 1 })
        const child = startWorker(t, urlOf(harness), 'inline')
        const pid = await waitFor(() => readPid(pidFile), 20_000, 'the handler starting')
        assert.equal(pid, child.pid)
        // The blocked worker cannot renew: once its lease is over, any worker's sweep recovers the job.
        await waitForLeaseEnd(store, id)
        const { dead } = await store.recoverExpired()
        assert.deepEqual(dead, [id])
        const job = (await getJob(store, id))!
        assert.equal(job.state, 'dead')
        assert.equal(job.lastError?.kind, 'lease_expired')
        assert.equal(
          child.exitCode,
          null,
          'the blocked worker is still there: only an outside supervisor can end it',
        )
      })
    })
  })
}

/**
 * Enqueues one job per expectation, and per unhandled name (and a good one after them), runs a
 * worker until all but the unhandled are final, checks each.
 */
async function runToTheEnd(
  t: TestContext,
  storeUnderTest: StoreUnderTest,
  strategy: ExecutionStrategy,
  expectations: readonly Expectation[],
  unhandled: readonly string[] = [],
): Promise<void> {
  const { store } = await freshStore(t, storeUnderTest)
  const client = createClient({ store })
  const ids = new Map<string, string>()
  for (const { name, timeoutMs } of expectations) {
    const { id } = await client.enqueue(name, null, { maxAttempts: 1, ...(timeoutMs && { timeoutMs }) })
    ids.set(name, id)
  }
  const unhandledIds = new Set<string>()
  for (const name of unhandled) unhandledIds.add((await client.enqueue(name, null, { maxAttempts: 1 })).id)
  const { id: okId } = await client.enqueue('ok', { after: 'the bad ones' }, { priority: -1 })
  const discard = (): Writable => new Writable({ write: (_chunk, _encoding, done) => done() })
  const executor = createExecutor(strategy, BAD_HANDLERS, {
    size: 4,
    killGraceMs: 300,
    maxHeapMb: 128,
    stdout: discard(),
    stderr: discard(),
  })
  const { worker, errors } = createWorker(t, {
    store,
    handlers: BAD_HANDLERS,
    executor,
    concurrency: 4,
  })
  await worker.start()
  const jobs = await waitFor(
    async () => {
      const all = await allJobs(store)
      const final = all.every(
        (job) => unhandledIds.has(job.id) || job.state === 'dead' || job.state === 'completed',
      )
      return final ? all : null
    },
    SETTLE_WITHIN_MS,
    'every job being final',
    100,
  )
  await stopWorker(worker)
  const byId = new Map(jobs.map((job) => [job.id, job]))
  for (const { name, check } of expectations) {
    const job = byId.get(ids.get(name)!)!
    assert.equal(job.state, 'dead', `${name}: ${JSON.stringify(job)}`)
    assert.equal(job.attempts, 1, name)
    assert.ok(job.lastError !== null, `${name} stores its cause`)
    check(job.lastError)
  }
  for (const id of unhandledIds) {
    const job = byId.get(id)!
    assert.equal(job.state, 'ready', `${job.name}: ${JSON.stringify(job)}`)
    assert.equal(job.attempts, 0, `${job.name} used no attempt`)
  }
  assert.equal(byId.get(okId)!.state, 'completed', 'the worker ran the good job after the bad ones')
  assert.deepEqual(errors, [])
}

async function isDead(store: Store, id: string): Promise<boolean> {
  return (await getJob(store, id))?.state === 'dead'
}

/** Waits until the job is not held by a live lease (a dead worker's lease must run out first). */
async function waitForLeaseEnd(store: Store, id: string): Promise<void> {
  await waitFor(
    async () => {
      const job = (await getJob(store, id))!
      return job.state !== 'active' || job.leaseExpiresAt! < Date.now()
    },
    10_000,
    'the lease running out',
    50,
  )
}

function startWorker(
  t: TestContext,
  url: string,
  strategy: ExecutionStrategy,
  env: Record<string, string> = {},
) {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env }
  delete childEnv.NODE_TEST_CONTEXT
  const args = [
    'work',
    '--handlers',
    BAD_HANDLERS,
    '--concurrency',
    '1',
    '--lease',
    '500ms',
    '--strategy',
    strategy,
  ]
  const child = spawn(process.execPath, ['--import', 'tsx', FERRY_MAIN, '--store', url, ...args], {
    env: childEnv,
    stdio: 'ignore',
  })
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  return child
}

/** Runs `ferry work` until it dies (its handler killed it) or `done` holds (then it is stopped). */
async function runWorkerUntil(
  t: TestContext,
  url: string,
  strategy: ExecutionStrategy,
  env: Record<string, string> | undefined,
  done: () => Promise<boolean>,
): Promise<'died' | 'stopped'> {
  const child = startWorker(t, url, strategy, env)
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  let died = false
  void exited.then(() => (died = true))
  await waitFor(async () => died || (await done()), 60_000, 'the worker dying or the job being dead', 50)
  if (died) return 'died'
  child.kill('SIGTERM')
  await exited
  return 'stopped'
}
