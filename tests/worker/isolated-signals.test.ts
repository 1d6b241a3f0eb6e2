/**
 * Signals and a real `ferry work` process under every strategy: only the worker (the supervisor)
 * decides when its children die. Ctrl-C in a terminal (SIGINT to the whole foreground process
 * group) and systemd's stop (SIGTERM to every process of the service) let running jobs finish on
 * their first attempt; a SIGKILLed worker leaves no child running, even one whose event loop a
 * CPU-bound handler blocks. Each `ferry work` runs in a process group of its own (as a shell runs
 * a foreground job), so the test can signal the group without signalling itself.
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test, type TestContext } from 'node:test'

import { createClient, type Store } from '../../src/index.js'
import { within } from '../support/async.js'
import { defer } from '../support/cleanup.js'
import {
  type Exit,
  isRunning,
  killRecordedAfter,
  REPO_ROOT,
  waitForPids,
  waitUntilGone,
  WORKER_STARTED,
} from '../support/processes.js'
import { tempStore } from '../support/sqlite-harness.js'
import { allJobs } from '../support/store-harness.js'
import { fixtureHandlers } from '../support/workers.js'

const HANDLERS = fixtureHandlers('process-tree.mjs')
const FERRY_MAIN = join(REPO_ROOT, 'src', 'cli', 'main.ts')
/** How long a handler of the graceful-stop tests runs: the signal arrives while both run. */
const JOB_MS = 2000

/** Whether util-linux setpriv (the children's parent-death signal) works on this machine. */
const HAS_SETPRIV =
  process.platform === 'linux' &&
  spawnSync('setpriv', ['--pdeathsig', 'KILL', '--', process.execPath, '--version'], { stdio: 'ignore' })
    .status === 0

interface GroupLeader {
  pid: number
  exited: Promise<Exit>
  waitForOutput(pattern: RegExp): Promise<void>
}

/**
 * `ferry --store <url> work --handlers process-tree.mjs …` as the leader of a new process group;
 * the group is SIGKILLed after the test if it still runs.
 */
function spawnWorkerGroup(t: TestContext, url: string, args: string[], env = process.env): GroupLeader {
  const childEnv = { ...env }
  delete childEnv.FERRY_STORE
  delete childEnv.NODE_TEST_CONTEXT
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', FERRY_MAIN, '--store', url, 'work', '--handlers', HANDLERS, ...args],
    { cwd: REPO_ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  )
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = new Promise<Exit>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  )
  defer(t, async () => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        // The group is empty.
      }
    }
    await exited
  })
  return {
    pid: child.pid!,
    exited,
    waitForOutput: (pattern) =>
      within(
        30_000,
        `ferry work printing ${pattern}:\n${stdout}${stderr}`,
        new Promise<void>((resolve) => {
          const check = (): void => {
            if (!pattern.test(stderr)) return
            child.stderr.off('data', check)
            resolve()
          }
          child.stderr.on('data', check)
          check()
        }),
      ),
  }
}

/** Enqueues the jobs, each told to record its pids in a file of its own, and returns the files. */
async function enqueueJobs(
  dir: string,
  store: Store,
  jobs: { name: string; payload: Record<string, unknown> }[],
): Promise<string[]> {
  const pidFiles = jobs.map((_, i) => join(dir, `job-${i}.json`))
  await createClient({ store }).enqueueMany(
    jobs.map(({ name, payload }, i) => ({ name, payload: { ...payload, pidFile: pidFiles[i] } })),
  )
  return pidFiles
}

async function exitOf(worker: GroupLeader): Promise<Exit> {
  return within(30_000, 'ferry work exiting', worker.exited)
}

const ALL_STRATEGIES = ['inline', 'threads', 'processes', 'fork'] as const

describe('a first SIGINT or SIGTERM lets running jobs finish, whatever the strategy', () => {
  for (const strategy of ALL_STRATEGIES) {
    test(`--strategy ${strategy}: Ctrl-C (SIGINT to the process group) lets both running jobs complete on attempt 1, exit 0`, async (t) => {
      const { store, url, dir } = await tempStore(t)
      const pidFiles = await enqueueJobs(dir, store, [
        { name: 'wait', payload: { ms: JOB_MS } },
        { name: 'wait', payload: { ms: JOB_MS } },
      ])
      killRecordedAfter(t, pidFiles)
      const worker = spawnWorkerGroup(t, url, ['--strategy', strategy, '--concurrency', '2'])
      await worker.waitForOutput(WORKER_STARTED)
      const running = await Promise.all(pidFiles.map((file) => waitForPids(file)))

      process.kill(-worker.pid, 'SIGINT')
      const exit = await exitOf(worker)

      assert.equal(exit.code, 0, exit.stderr)
      assert.doesNotMatch(exit.stderr, /killed by/)
      const jobs = await allJobs(store)
      assert.deepEqual(
        jobs.map((job) => [job.state, job.attempts, job.result]),
        running.map(({ pid }) => ['completed', 1, { pid }]),
      )
    })
  }

  for (const strategy of ['processes', 'fork'] as const) {
    test(`--strategy ${strategy}: SIGTERM to the group and to every child (systemd's stop) lets both running jobs complete on attempt 1, exit 0`, async (t) => {
      const { store, url, dir } = await tempStore(t)
      const pidFiles = await enqueueJobs(dir, store, [
        { name: 'wait', payload: { ms: JOB_MS } },
        { name: 'wait', payload: { ms: JOB_MS } },
      ])
      killRecordedAfter(t, pidFiles)
      const worker = spawnWorkerGroup(t, url, ['--strategy', strategy, '--concurrency', '2'])
      await worker.waitForOutput(WORKER_STARTED)
      const running = await Promise.all(pidFiles.map((file) => waitForPids(file)))
      for (const { pid } of running) assert.notEqual(pid, worker.pid, 'the job runs in a child process')

      // systemd's default KillMode (control-group) signals every process of the service's cgroup.
      process.kill(-worker.pid, 'SIGTERM')
      for (const { pid } of running) process.kill(pid, 'SIGTERM')
      const exit = await exitOf(worker)

      assert.equal(exit.code, 0, exit.stderr)
      assert.doesNotMatch(exit.stderr, /killed by/)
      const jobs = await allJobs(store)
      assert.deepEqual(
        jobs.map((job) => [job.state, job.attempts, job.result]),
        running.map(({ pid }) => ['completed', 1, { pid }]),
      )
    })
  }
})

describe('a SIGKILLed worker leaves no child process running', () => {
  for (const strategy of ['processes', 'fork'] as const) {
    test(
      `--strategy ${strategy}: the child of an async job and the child of a CPU-bound one are gone`,
      HAS_SETPRIV ? {} : { skip: 'util-linux setpriv --pdeathsig is not available here' },
      async (t) => {
        const { store, url, dir } = await tempStore(t)
        const pidFiles = await enqueueJobs(dir, store, [
          { name: 'wait', payload: { ms: 600_000 } },
          { name: 'spin', payload: {} },
        ])
        killRecordedAfter(t, pidFiles)
        const worker = spawnWorkerGroup(t, url, ['--strategy', strategy, '--concurrency', '2'])
        await worker.waitForOutput(WORKER_STARTED)
        const running = await Promise.all(pidFiles.map((file) => waitForPids(file)))
        assert.ok(running.every(({ pid }) => isRunning(pid)))

        process.kill(worker.pid, 'SIGKILL')
        assert.equal((await exitOf(worker)).signal, 'SIGKILL')
        await waitUntilGone(
          running.map(({ pid }) => pid),
          "the SIGKILLed worker's children",
        )
      },
    )
  }

  test('without setpriv, a child whose job is async ends itself and what its job started', async (t) => {
    const { store, url, dir } = await tempStore(t)
    // A PATH with `sleep` (for the handler) and without setpriv: the children run node directly.
    const bin = join(dir, 'bin')
    mkdirSync(bin)
    const sleep = spawnSync('sh', ['-c', 'command -v sleep'], { encoding: 'utf8' }).stdout.trim()
    symlinkSync(sleep, join(bin, 'sleep'))
    const pidFiles = await enqueueJobs(dir, store, [{ name: 'spawns-sleep', payload: { ms: 600_000 } }])
    killRecordedAfter(t, pidFiles)
    const worker = spawnWorkerGroup(t, url, ['--strategy', 'processes', '--concurrency', '1'], {
      ...process.env,
      PATH: bin,
    })
    await worker.waitForOutput(WORKER_STARTED)
    const { pid, sleepPid } = await waitForPids(pidFiles[0]!)

    process.kill(worker.pid, 'SIGKILL')
    assert.equal((await exitOf(worker)).signal, 'SIGKILL')
    await waitUntilGone([pid, sleepPid!], "the SIGKILLed worker's child and its job's sleep")
  })
})
