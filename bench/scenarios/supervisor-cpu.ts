import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { SqliteStore } from '../../src/sqlite.js'
import { DIST_CLI, ensureBuilt } from '../lib/dist.js'
import { fixturePath } from '../lib/fixture-process.js'
import { childPids, clockTicksPerSecond, processCpu, processCpuTicks, threadTotals } from '../lib/proc.js'
import { openBenchStore } from '../lib/store.js'
import { isAlive, REPO_ROOT, WORKER_STARTED } from '../../tests/support/processes.js'
import { withTempDir } from '../lib/temp.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

type Strategy = 'processes' | 'fork'

const STRATEGIES: readonly Strategy[] = ['processes', 'fork']
const CPU_HANDLERS = fixturePath('cpu-handlers.mjs')
const READY_TIMEOUT_MS = 30_000
/** After the worker says it runs, before the job is enqueued. */
const SETTLE_MS = 2_000
const POLL_MS = 50

interface Measured {
  wallS: number
  supervisorTicks: number
  supervisorNs: number
  jobTicks: number
  ticksPerSecond: number
}

/**
 * The Drush report's scenario: one CPU-bound job (a busy loop for `seconds` of wall time) run by
 * `node dist/cli/main.js work --strategy processes|fork --concurrency 1` (compiled, no TypeScript
 * loader) in a child process: the supervisor. It is left to settle 2 s after it says it runs,
 * then its CPU time is read, the job enqueued, the store polled every 50 ms until the job is
 * completed, and its CPU time read again: utime + stime from /proc/<pid>/stat (clock ticks), and
 * exactly from its threads' schedstat. The job's CPU: under processes, the pool child's own
 * utime + stime over the same window (it lives on); under fork, the child exits after its job,
 * so it is read as the growth of the supervisor's cutime + cstime once the child has been reaped
 * — that child's whole life, its start-up included.
 */
export async function supervisorCpu(seconds: number): Promise<Figure[]> {
  ensureBuilt()
  const ticksPerSecond = clockTicksPerSecond()
  const figures: Figure[] = []
  for (const strategy of STRATEGIES) {
    const m = await measure(strategy, seconds, ticksPerSecond)
    const jobMs = (m.jobTicks * 1000) / ticksPerSecond
    figures.push(
      {
        key: `${strategy}.supervisor_cpu_pct`,
        label: `${strategy}: supervisor CPU, % of the job's CPU (/proc/<pid>/stat, 1 tick = ${1000 / ticksPerSecond} ms)`,
        value: (100 * m.supervisorTicks) / m.jobTicks,
        unit: '%',
        mayBeZero: true,
      },
      {
        key: `${strategy}.supervisor_cpu_pct_schedstat`,
        label: `${strategy}: the same from the supervisor's per-thread schedstat (ns)`,
        value: (100 * m.supervisorNs) / 1e6 / jobMs,
        unit: '%',
        mayBeZero: true,
      },
      {
        key: `${strategy}.supervisor_cpu_ms`,
        label: `${strategy}: supervisor CPU over the job (schedstat)`,
        value: m.supervisorNs / 1e6,
        unit: 'ms',
      },
      {
        key: `${strategy}.job_cpu_s`,
        label: `${strategy}: the job's child CPU (${seconds} s busy loop; window ${m.wallS.toFixed(2)} s)`,
        value: jobMs / 1000,
        unit: 's',
      },
    )
  }
  return figures
}

async function measure(strategy: Strategy, seconds: number, ticksPerSecond: number): Promise<Measured> {
  return withTempDir('supervisor-cpu', async (dir) => {
    const dbPath = join(dir, 'bench.db')
    await (await SqliteStore.open({ path: dbPath, durability: 'full' })).close()
    const args = [
      DIST_CLI,
      '--store',
      `sqlite://${dbPath}`,
      'work',
      '--strategy',
      strategy,
      '--handlers',
      CPU_HANDLERS,
      '--concurrency',
      '1',
      '--time-limit',
      `${Math.ceil(seconds + SETTLE_MS / 1000 + 60)}s`,
    ]
    const supervisor = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] })
    const killNow = (): void => void supervisor.kill('SIGKILL')
    process.once('exit', killNow)
    let stderr = ''
    supervisor.stderr!.setEncoding('utf8')
    supervisor.stderr!.on('data', (chunk: string) => (stderr += chunk))
    const exited = new Promise<void>((resolve) => {
      supervisor.once('exit', () => resolve())
      supervisor.once('error', () => resolve())
    })
    const alive = (): boolean => supervisor.exitCode === null && supervisor.signalCode === null
    const bench = await openBenchStore(dir, 'full')
    try {
      const readyBy = Date.now() + READY_TIMEOUT_MS
      while (!WORKER_STARTED.test(stderr)) {
        if (!alive()) throw new Error(`the supervisor exited; stderr:\n${stderr}`)
        if (Date.now() > readyBy) throw new Error(`the supervisor did not start; stderr:\n${stderr}`)
        await sleep(POLL_MS)
      }
      await sleep(SETTLE_MS)
      const pid = supervisor.pid!
      const before = processCpu(pid)
      const beforeNs = threadTotals(pid).cpuNs
      const children = childPids(pid)
      const childBefore = new Map(children.map((child) => [child, processCpuTicks(child)]))
      const start = process.hrtime.bigint()
      await bench.client.enqueue('bench.cpu', { ms: seconds * 1000 })
      for (;;) {
        await sleep(POLL_MS)
        if (!alive()) throw new Error(`the supervisor exited during the job; stderr:\n${stderr}`)
        const stats = await bench.store.stats()
        if (stats.some((queue) => queue.dead > 0)) throw new Error(`the job died; stderr:\n${stderr}`)
        if (stats.reduce((sum, queue) => sum + queue.completed, 0) === 1) break
      }
      const wallS = Number(process.hrtime.bigint() - start) / 1e9
      let jobTicks: number
      let after
      if (strategy === 'processes') {
        // The pool child runs on: its own CPU time over the window.
        after = processCpu(pid)
        jobTicks = 0
        for (const [child, ticks] of childBefore) {
          if (!isAlive(child)) throw new Error(`the pool child ${child} exited during the job`)
          jobTicks += processCpuTicks(child) - ticks
        }
      } else {
        // The job's child exits after its job: wait until it has been reaped, then its whole
        // life's CPU time is in the supervisor's cutime + cstime.
        const reapedBy = Date.now() + 5_000
        while (children.some(isAlive) && Date.now() < reapedBy) await sleep(10)
        after = processCpu(pid)
        jobTicks = after.children - before.children
      }
      const afterNs = threadTotals(pid).cpuNs
      if (jobTicks <= 0) throw new Error(`no CPU time measured for the job (${jobTicks} ticks)`)
      return {
        wallS,
        supervisorTicks: after.self - before.self,
        supervisorNs: afterNs - beforeNs,
        jobTicks,
        ticksPerSecond,
      }
    } finally {
      if (alive()) {
        supervisor.kill('SIGTERM')
        const timer = setTimeout(killNow, 5_000)
        await exited
        clearTimeout(timer)
      }
      process.off('exit', killNow)
      await bench.close()
    }
  })
}

export const supervisorCpuScenario: ScenarioDef = {
  name: 'supervisor-cpu',
  summary:
    "CPU of a `ferry work` supervisor process while its child runs a 10 s CPU-bound job, as % of the job's CPU (processes, fork)",
  fullSize: 10,
  quickSize: 1,
  run: supervisorCpu,
  targets: {
    'processes.supervisor_cpu_pct': { op: '<', value: 1 },
    'fork.supervisor_cpu_pct': { op: '<', value: 1 },
  },
}
