/**
 * The Executor conformance suite: what every execution strategy (src/worker/executors/) must do
 * with each way a handler can behave, checked through the Executor interface alone. Each
 * strategy's test file calls runExecutorConformance; a strategy that cannot pass a case lists it
 * in `skip` with a reason, and the case shows up as skipped.
 *
 * One fixture module per misbehaviour (tests/support/handlers/), each of which also
 * exports the well-behaved `ok` handler: every test ends by running an `ok` job on the same
 * executor, so "the executor survives" is checked after every misbehaviour. Attempts are built by
 * hand (a ClaimedJob-shaped object and an AttemptAbort); aborting one is what the worker does on a
 * timeout or a hard stop.
 */
import { spawn } from 'node:child_process'
import { Writable } from 'node:stream'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'

import type { ClaimedJob, JobError } from '../../src/core/job.js'
import type { PoolExecutorOptions } from '../../src/worker/executors/pool/pool-options.js'
import { AttemptAbort, type ExecutionOutcome, type Executor } from '../../src/worker/executors/executor.js'
import { waitFor, within } from '../support/async.js'
import { defer } from '../support/cleanup.js'
import { isAlive, isRunning, readPid, REPO_ROOT } from '../support/processes.js'
import { fixtureHandlers } from '../support/workers.js'

export interface SkipEntry {
  /** Test names, exactly as the suite spells them. */
  tests: string[]
  reason: string
}

export interface ExecutorConformanceOptions {
  /** Shown as the suite's title, e.g. 'threads'. */
  name: string
  /** A new executor (not started) running the handlers of the module at this absolute path. */
  createExecutor: (handlersModulePath: string) => Executor
  skip?: readonly SkipEntry[]
  /**
   * `import.meta.url` of the strategy's test file. The suite runs that file again in a child process
   * with FERRY_EXECUTOR_PROBE set, where it only starts an executor, uses it and closes it: the child
   * must then exit on its own (nothing left running). Without it, that test is skipped.
   */
  testFile?: string
}

/** How long one attempt may take before the test fails instead of hanging. */
const RUN_TIMEOUT_MS = 15_000
/** An oom attempt allocates up to the heap limit first (the default limit is several GB). */
const OOM_TIMEOUT_MS = 60_000
/** When a test aborts an attempt, as the worker would on a 200 ms timeout. */
const ABORT_AFTER_MS = 200
/** How long an aborted attempt's process may take to be killed (the kill grace plus margin). */
const KILL_WITHIN_MS = 5000
const PROBE_ENV = 'FERRY_EXECUTOR_PROBE'

let jobSequence = 0

/**
 * Pool options for the isolating strategies' conformance files: a short kill grace, so an
 * abandoned attempt is killed quickly; a 128 MB heap, which runs out fast; children's output,
 * prefixed by the executor, discarded rather than cluttering the test report.
 */
export function isolatingTestOptions(): PoolExecutorOptions {
  const discard = (): Writable => new Writable({ write: (_chunk, _encoding, done) => done() })
  return { size: 2, killGraceMs: 300, maxHeapMb: 128, stdout: discard(), stderr: discard() }
}

/** A job as `claim` hands it out. */
export function claimedJob(
  name: string,
  payload: unknown = null,
  overrides: Partial<ClaimedJob> = {},
): ClaimedJob {
  const now = Date.now()
  const id = String(++jobSequence)
  return {
    id,
    queue: 'default',
    name,
    payload,
    state: 'active',
    priority: 0,
    runAt: now,
    attempts: 1,
    maxAttempts: 3,
    timeoutMs: null,
    uniqueKey: null,
    group: null,
    schedule: null,
    backoff: null,
    keepForMs: null,
    trace: null,
    expiresAt: null,
    lastError: null,
    result: null,
    progress: null,
    logs: [],
    workerId: 'conformance',
    leaseToken: `lease-${id}`,
    leaseExpiresAt: now + 30_000,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
    ...overrides,
  }
}

export function runExecutorConformance({
  name,
  createExecutor,
  skip = [],
  testFile,
}: ExecutorConformanceOptions): void {
  if (process.env[PROBE_ENV] !== undefined) {
    // This process is the child of the close() test: no tests here, only the probe.
    void runProbe(createExecutor)
    return
  }

  const skipReasons = new Map<string, string>()
  for (const entry of skip) for (const title of entry.tests) skipReasons.set(title, entry.reason)
  const defined = new Set<string>()

  /** A test with an executor of its own (started on `fixture`), closed whatever happens. */
  const test = (
    title: string,
    fixture: string,
    body: (x: Executor, t: TestContext) => Promise<void>,
  ): void => {
    bare(title, async (t) => {
      const executor = createExecutor(fixtureHandlers(fixture))
      defer(t, () => within(10_000, `closing the ${name} executor`, executor.close()))
      await within(20_000, `starting the ${name} executor`, executor.start())
      await body(executor, t)
    })
  }

  /** A test that manages its executor itself; skipped (visibly) when the strategy lists it. */
  const bare = (title: string, body: (t: TestContext) => Promise<void>, cannotRun?: string): void => {
    if (defined.has(title)) throw new Error(`two conformance tests are named "${title}"`)
    defined.add(title)
    const reason = skipReasons.get(title) ?? cannotRun
    it(title, reason === undefined ? {} : { skip: reason }, body)
  }

  describe(`Executor conformance: ${name}`, () => {
    describe('outcomes', () => {
      test(
        'reports the name of its strategy and the job names of the module once started',
        'throws.mjs',
        async (x) => {
          assert.equal(x.strategy, name)
          assert.deepEqual([...x.jobNames].sort(), ['ok', 'throws'])
        },
      )

      test(
        'completes a job with the handler result and passes payload, attempt and job',
        'ok.mjs',
        async (x) => {
          const job = claimedJob('ok', { n: 42, text: 'ünïcødé ✓' }, { attempts: 2 })
          const result = completed(await run(x, job))
          assert.equal(result.ok, true)
          assert.deepEqual(result.payload, { n: 42, text: 'ünïcødé ✓' })
          assert.equal(result.attempt, 2)
          assert.equal(result.jobId, job.id)
        },
      )

      test(
        'fails a job whose handler throws an Error, with kind error, message and stack',
        'throws.mjs',
        async (x) => {
          const error = failed(await run(x, claimedJob('throws')))
          assert.equal(error.kind, 'error')
          assert.equal(error.name, 'Error')
          assert.equal(error.message, 'the handler failed on purpose')
          assert.match(error.stack ?? '', /the handler failed on purpose/)
          assert.match(error.stack ?? '', /throwsOnPurpose|throws\.mjs/, 'the stack points into the handler')
          await assertStillWorks(x)
        },
      )

      test(
        'fails a job whose handler throws a string, with kind non_error and the value in the message',
        'throws-string.mjs',
        async (x) => {
          const error = failed(await run(x, claimedJob('throws-string')))
          assert.equal(error.kind, 'non_error')
          assert.match(error.message, /a plain string, not an Error/)
          await assertStillWorks(x)
        },
      )

      test('fails a job whose async handler rejects, like one that throws', 'scripted.ts', async (x) => {
        const error = failed(
          await run(x, claimedJob('script', { steps: [{ sleepMs: 1, throw: 'rejected later' }] })),
        )
        assert.equal(error.kind, 'error')
        assert.equal(error.message, 'rejected later')
        const value = failed(await run(x, claimedJob('script', { steps: [{ throwValue: { code: 7 } }] })))
        assert.equal(value.kind, 'non_error')
        assert.match(value.message, /"code":7/)
      })

      test('reports snoozed with the delay when the handler calls snooze', 'scripted.ts', async (x) => {
        assert.deepEqual(await run(x, claimedJob('script', { steps: [{ snoozeMs: 1500 }] })), {
          kind: 'snoozed',
          delayMs: 1500,
        })
        await assertStillWorks(x)
      })

      test(
        'reports permanent with the reason when the handler calls permanentFailure',
        'scripted.ts',
        async (x) => {
          const outcome = await run(
            x,
            claimedJob('script', { steps: [{ permanent: 'the account is gone' }] }),
          )
          assert.equal(outcome.kind, 'permanent', describeOutcome(outcome))
          assert.equal(outcome.error.kind, 'permanent')
          assert.equal(outcome.error.message, 'the account is gone')
          await assertStillWorks(x)
        },
      )

      test(
        'runs handlers from a TypeScript module and returns JSON results intact',
        'scripted.ts',
        async (x) => {
          const result = { nested: { list: [1, 'two', null, true], empty: {} }, text: 'ünïcødé ✓' }
          assert.deepEqual(completed(await run(x, claimedJob('script', { steps: [{ result }] }))), result)
          assert.deepEqual(await run(x, claimedJob('script', { steps: [{ result: null }] })), {
            kind: 'completed',
            result: null,
          })
        },
      )

      test('fails a job whose name has no handler with kind unknown_handler', 'ok.mjs', async (x) => {
        const error = failed(await run(x, claimedJob('no-such-job')))
        assert.equal(error.kind, 'unknown_handler')
        assert.match(error.message, /no-such-job/)
        await assertStillWorks(x)
      })

      test('runs several attempts at once and gives each its own outcome', 'scripted.ts', async (x) => {
        const jobs = Array.from({ length: 8 }, (_, i) =>
          i % 2 === 0
            ? claimedJob('script', { steps: [{ sleepMs: 20 * (8 - i), result: { i } }] })
            : claimedJob('script', { steps: [{ sleepMs: 20 * (8 - i), throw: `failure ${i}` }] }),
        )
        const outcomes = await Promise.all(jobs.map((job) => run(x, job)))
        for (const [i, outcome] of outcomes.entries()) {
          if (i % 2 === 0) assert.deepEqual(outcome, { kind: 'completed', result: { i } })
          else assert.equal(failed(outcome).message, `failure ${i}`)
        }
      })
    })

    describe('aborting', () => {
      test('reports aborted for an attempt aborted before it ran', 'ok.mjs', async (x) => {
        const abort = new AttemptAbort()
        abort.abort(new Error('aborted: shutdown'))
        assertAborted(await run(x, claimedJob('ok'), abort))
        await assertStillWorks(x)
      })

      test(
        'reports aborted and signals the handler when a cooperative attempt is aborted',
        'scripted.ts',
        async (x) => {
          const abort = new AttemptAbort()
          const outcome = run(x, claimedJob('script', { steps: [{ sleepMs: 60_000 }] }), abort)
          setTimeout(() => abort.abort(new Error('timed out after 200 ms')), ABORT_AFTER_MS)
          assertAborted(await outcome)
          await assertStillWorks(x)
        },
      )

      test(
        'reports aborted for a handler that never resolves, kills what ran it and runs the next job',
        'never-resolves.mjs',
        async (x, t) => {
          const pidFile = tempFile(t, 'pid')
          const abort = new AttemptAbort()
          const outcome = run(x, claimedJob('never-resolves', { pidFile }), abort)
          setTimeout(() => abort.abort(new Error('timed out after 200 ms')), ABORT_AFTER_MS)
          assertAborted(await outcome)
          await assertKilled(pidFile)
          await assertStillWorks(x)
        },
      )

      test(
        'reports aborted for a handler that blocks its event loop, kills it and runs the next job',
        'blocks-loop.mjs',
        async (x, t) => {
          const pidFile = tempFile(t, 'pid')
          const abort = new AttemptAbort()
          const outcome = run(x, claimedJob('blocks-loop', { pidFile }), abort)
          setTimeout(() => abort.abort(new Error('timed out after 200 ms')), ABORT_AFTER_MS)
          assertAborted(await outcome)
          await assertKilled(pidFile)
          await assertStillWorks(x)
        },
      )

      test(
        'kills the processes a handler started when its attempt is aborted, and runs the next job',
        'spawns-sleep.mjs',
        async (x, t) => {
          const pidFile = tempFile(t, 'pid')
          const abort = new AttemptAbort()
          const outcome = run(x, claimedJob('spawns-sleep', { pidFile }), abort)
          const sleepPid = await waitFor(() => readPid(pidFile), RUN_TIMEOUT_MS, 'the handler starting sleep')
          defer(t, () => killIfRunning(sleepPid))
          abort.abort(new Error('timed out after 200 ms'))
          assertAborted(await outcome)
          await waitFor(() => !isRunning(sleepPid), KILL_WITHIN_MS, `the sleep (${sleepPid}) being killed`)
          await assertStillWorks(x)
        },
      )
    })

    describe('crashes', () => {
      test(
        'fails a job whose handler calls process.exit(3) as a crash with exit code 3',
        'exits.mjs',
        async (x) => {
          const error = failed(await run(x, claimedJob('exits')))
          assert.equal(error.kind, 'crash', describeError(error))
          assert.equal(error.exitCode, 3)
          assert.match(error.message, /3/, 'the message gives the exit code')
          await assertStillWorks(x)
        },
      )

      test(
        'fails a job whose handler SIGKILLs its own process as a crash with signal SIGKILL',
        'kills-self.mjs',
        async (x) => {
          const error = failed(await run(x, claimedJob('kills-self')))
          assert.equal(error.kind, 'crash', describeError(error))
          assert.equal(error.signal, 'SIGKILL')
          assert.match(error.message, /SIGKILL/, 'the message gives the signal')
          await assertStillWorks(x)
        },
      )

      test('fails a job whose handler runs out of memory as a crash that says so', 'oom.mjs', async (x) => {
        const error = failed(await run(x, claimedJob('oom'), new AttemptAbort(), OOM_TIMEOUT_MS))
        assert.equal(error.kind, 'crash', describeError(error))
        assert.match(error.message, /memory/i, 'the message says the handler ran out of memory')
        await assertStillWorks(x)
      })

      test(
        'keeps the last lines the handler wrote to stderr with its failure',
        'writes-stderr.mjs',
        async (x) => {
          const error = failed(await run(x, claimedJob('writes-stderr', { lines: 50 })))
          assert.equal(error.kind, 'error', describeError(error))
          assert.equal(error.message, 'failed after writing to stderr')
          assert.equal(typeof error.stderrTail, 'string', 'the failure has a stderrTail')
          assert.match(error.stderrTail!, /stderr line 50 of 50/, 'the tail ends with the last line written')
          assert.match(error.stderrTail!, /stderr line 49 of 50/)
          await assertStillWorks(x)
        },
      )

      test('survives ten crashing attempts in a row and still completes jobs', 'exits.mjs', async (x) => {
        for (let i = 0; i < 10; i++) {
          const error = failed(await run(x, claimedJob('exits')))
          assert.equal(error.kind, 'crash', `attempt ${i + 1}: ${describeError(error)}`)
          assert.equal(error.exitCode, 3)
        }
        await assertStillWorks(x)
      })
    })

    describe('closing', () => {
      test('aborts attempts still running when it is closed', 'never-resolves.mjs', async (x) => {
        const running = x.run({ job: claimedJob('never-resolves'), abort: new AttemptAbort() })
        // The attempt is running once a later job has been started after it and completed.
        await assertStillWorks(x)
        await within(10_000, 'close()', x.close())
        const outcome = await within(5000, 'the attempt still running at close() settling', running)
        assertAborted(outcome)
      })

      bare(
        'leaves nothing running after close(): a process that used it exits on its own',
        async (t) => {
          const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(testFile!)], {
            cwd: REPO_ROOT,
            env: { ...withoutTestContext(process.env), [PROBE_ENV]: '1' },
            stdio: ['ignore', 'pipe', 'pipe'],
          })
          let output = ''
          child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
          child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
          const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
            child.on('close', (code, signal) => resolve({ code, signal })),
          )
          defer(t, async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
            await exited
          })
          const exit = await within(
            30_000,
            `the probe process (still running after close()):\n${output}`,
            exited,
          )
          assert.deepEqual(exit, { code: 0, signal: null }, output)
          assert.match(output, /probe: closed/, output)
        },
        testFile === undefined ? 'the strategy did not give its test file (testFile)' : undefined,
      )
    })
  })
}

// ── the probe (a child process of the close() test) ─────────────────────────────────────────

/**
 * Starts an executor, runs a job, leaves one running that never ends, closes the executor and
 * returns: the process must then exit by itself, so nothing (child process, thread, timer, pipe)
 * may be left behind. Exits with 1 (without waiting) if a step fails.
 */
async function runProbe(createExecutor: (handlersModulePath: string) => Executor): Promise<void> {
  try {
    const executor = createExecutor(fixtureHandlers('never-resolves.mjs'))
    await executor.start()
    const first = await executor.run({ job: claimedJob('ok'), abort: new AttemptAbort() })
    if (first.kind !== 'completed') throw new Error(`the ok job ended ${describeOutcome(first)}`)
    const hanging = executor.run({ job: claimedJob('never-resolves'), abort: new AttemptAbort() })
    const second = await executor.run({ job: claimedJob('ok'), abort: new AttemptAbort() })
    if (second.kind !== 'completed') throw new Error(`the second ok job ended ${describeOutcome(second)}`)
    // Whether close() settles the running attempt is another test's business: here only what is
    // left running afterwards counts.
    void hanging
    await executor.close()
    process.stdout.write('probe: closed\n')
  } catch (error) {
    process.stderr.write(`probe: ${(error as Error).stack ?? String(error)}\n`)
    process.exit(1)
  }
}

// ── helpers ──────────────────────────────────────────────────────────────────────────────────

async function run(
  executor: Executor,
  job: ClaimedJob,
  abort = new AttemptAbort(),
  timeoutMs = RUN_TIMEOUT_MS,
): Promise<ExecutionOutcome> {
  return within(timeoutMs, `the ${job.name} attempt`, executor.run({ job, abort }))
}

/** Aborted (an isolating strategy may add how it killed the child: `killed`). */
function assertAborted(outcome: ExecutionOutcome): void {
  assert.equal(outcome.kind, 'aborted', describeOutcome(outcome))
}

function completed(outcome: ExecutionOutcome): Record<string, unknown> {
  assert.equal(outcome.kind, 'completed', describeOutcome(outcome))
  return outcome.result as Record<string, unknown>
}

function failed(outcome: ExecutionOutcome): JobError {
  assert.equal(outcome.kind, 'failed', describeOutcome(outcome))
  return outcome.error
}

/** An ok job completes on this executor. */
async function assertStillWorks(executor: Executor): Promise<void> {
  const result = completed(await run(executor, claimedJob('ok', { after: 'misbehaviour' })))
  assert.deepEqual(result.payload, { after: 'misbehaviour' })
}

/**
 * When the attempt ran in another process (it wrote that process's id to `pidFile`), that process
 * is gone within the kill grace. An attempt in this process (inline, a thread) has nothing to check
 * here: the next job running, and the probe exiting, show a thread was stopped.
 */
async function assertKilled(pidFile: string): Promise<void> {
  const pid = await waitFor(() => readPid(pidFile), KILL_WITHIN_MS, 'the handler writing its pid')
  if (pid === process.pid) return
  await waitFor(() => !isAlive(pid), KILL_WITHIN_MS, `process ${pid} (the aborted attempt's) being killed`)
}

/** A safety net after a test: what it started and failed to see killed goes. */
function killIfRunning(pid: number): void {
  if (!isRunning(pid)) return
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // Ended meanwhile.
  }
}

function tempFile(t: TestContext, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-executor-'))
  defer(t, () => rmSync(dir, { recursive: true, force: true }))
  return join(dir, name)
}

function withoutTestContext(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env }
  delete copy.NODE_TEST_CONTEXT
  return copy
}

function describeOutcome(outcome: ExecutionOutcome): string {
  return `the outcome was ${JSON.stringify(outcome)}`
}

function describeError(error: JobError): string {
  return `the error was ${JSON.stringify(error)}`
}
