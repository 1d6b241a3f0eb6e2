import { setTimeout as sleep } from 'node:timers/promises'
import type { JobSpec } from '../../src/client/client.js'
import type { SqliteDurability } from '../../src/sqlite.js'
import { ensureBuilt } from '../lib/dist.js'
import { fixturePath, startFixture, type FixtureProcess } from '../lib/fixture-process.js'
import { openBenchStore } from '../lib/store.js'
import { withTempDir } from '../lib/temp.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

type Strategy = 'inline' | 'threads' | 'processes' | 'fork'

const STRATEGIES: readonly Strategy[] = ['inline', 'threads', 'processes', 'fork']
const WORKER_COUNTS = [1, 2] as const
const DURABILITIES: readonly SqliteDurability[] = ['full', 'normal']
const NOOP_HANDLERS = fixturePath('noop-handlers.mjs')
const JOB_NAME = 'bench.noop'
/**
 * fork starts a Node process per job (~150 ms each here): a fortieth of the jobs measures the same
 * cost (50 of 2,000), and keeps a full run of this scenario near three minutes.
 */
const FORK_SHARE = 0.025
const READY_TIMEOUT_MS = 30_000
/** No completion for this long: a worker is stuck, the run fails. */
const STALL_TIMEOUT_MS = 60_000
const POLL_MS = 20
/**
 * The executor alone, saturated: a pool of 2 children (one per core of this machine) with this
 * many attempts given to it at once, as a worker with a backlog and a concurrency above the pool
 * size would; a busy child is then handed its next job ahead (pipelining).
 */
const SATURATED_POOL = 2
const SATURATED_IN_FLIGHT = 16
const SATURATED_STRATEGIES: readonly Strategy[] = ['threads', 'processes']

const fmt = (n: number): string => n.toLocaleString('en-US')
const jobsFor = (strategy: Strategy, size: number): number =>
  Math.max(1, Math.round(strategy === 'fork' ? size * FORK_SHARE : size))
const workersLabel = (n: number): string => `${n} worker${n === 1 ? '' : 's'}`

interface Report {
  type: 'report'
  completed: number
  lastCompletedNs: string
}

/**
 * The php-resque report's benchmark ("Completed 2000 jobs in X s, Y ms per job per core"), for
 * each execution strategy: `size` no-op jobs (fork: a tenth) are enqueued first, then 1 or 2
 * workers process them. A worker is a child process (bench/fixtures/strategy-worker.mjs, plain
 * Node on dist/) running one Worker at concurrency 1 with a pool of one child, as the report's
 * workers were processes. Each starts its store and executor (pool started), says ready, and
 * only then does this process take the time and tell every worker to go; the clock stops at the
 * last 'job:completed' event of any worker (CLOCK_MONOTONIC, shared by every process). ms per job
 * per core = seconds × 1000 × workers / jobs (the report's formula). Each run is on a fresh
 * database under durability 'full', then again under 'normal' (no sync per commit). Lastly the
 * executor alone, no store: `executor.run()` back to back for `size` jobs (fork: a fortieth) on a
 * pool of one child, each awaited before the next (the latency of one job); and, for threads and
 * processes, `size` jobs through a pool of 2 with 16 in flight (saturated throughput, in the
 * report's form: wall time × 2 cores / jobs).
 */
export async function strategyOverhead(size: number): Promise<Figure[]> {
  ensureBuilt()
  const figures: Figure[] = []
  for (const strategy of STRATEGIES) {
    const jobs = jobsFor(strategy, size)
    for (const durability of DURABILITIES) {
      const suffix = durability === 'full' ? '' : ` [${durability}]`
      const tagSuffix = durability === 'full' ? '' : `.${durability}`
      for (const workers of WORKER_COUNTS) {
        const seconds = await measureQueue(strategy, jobs, workers, durability)
        const tag = `${strategy}.w${workers}${tagSuffix}`
        figures.push(
          {
            key: `${tag}.total_s`,
            label: `${strategy}, ${workersLabel(workers)}: completed ${fmt(jobs)} jobs in${suffix}`,
            value: seconds,
            unit: 's',
          },
          {
            key: `${tag}.ms_per_job_core`,
            label: `${strategy}, ${workersLabel(workers)}: ms per job per core${suffix}`,
            value: (seconds * 1000 * workers) / jobs,
            unit: 'ms',
          },
        )
      }
    }
    const alone = await measureExecutorAlone(strategy, jobs, 1, 1)
    figures.push({
      key: `${strategy}.executor_ms_per_job`,
      label: `${strategy}: executor alone, ms per job (${fmt(jobs)} executor.run() back to back, no store)`,
      value: (alone * 1000) / jobs,
      unit: 'ms',
    })
    if (SATURATED_STRATEGIES.includes(strategy)) {
      const saturated = await measureExecutorAlone(strategy, jobs, SATURATED_POOL, SATURATED_IN_FLIGHT)
      figures.push({
        key: `${strategy}.executor_saturated_ms_per_job_core`,
        label: `${strategy}: executor alone, saturated, ms per job per core (${fmt(jobs)} jobs, pool of ${SATURATED_POOL}, ${SATURATED_IN_FLIGHT} in flight, no store)`,
        value: (saturated * 1000 * SATURATED_POOL) / jobs,
        unit: 'ms',
      })
    }
  }
  return figures
}

async function measureQueue(
  strategy: Strategy,
  jobs: number,
  workers: number,
  durability: SqliteDurability,
): Promise<number> {
  return withTempDir('strategy-overhead', async (dir) => {
    const bench = await openBenchStore(dir, 'full')
    const children: FixtureProcess[] = []
    try {
      const specs: JobSpec[] = Array.from({ length: jobs }, (_, i) => ({
        name: JOB_NAME,
        payload: { seq: i },
      }))
      await bench.client.enqueueMany(specs)
      for (let i = 0; i < workers; i++) {
        children.push(startFixture('strategy-worker.mjs', [bench.path, durability, strategy, NOOP_HANDLERS]))
      }
      await Promise.all(children.map((child) => child.next('ready', READY_TIMEOUT_MS)))
      const start = process.hrtime.bigint()
      for (const child of children) child.send({ type: 'go' })
      // Poll the store (a read in WAL mode: it never blocks the workers' writes) until every job
      // is completed; the end time is the workers' own, not the poll's.
      let lastDone = -1
      let lastProgressAt = Date.now()
      for (;;) {
        await sleep(POLL_MS)
        const done = (await bench.store.stats()).reduce((sum, queue) => sum + queue.completed, 0)
        if (done === jobs) break
        if (done !== lastDone) {
          lastDone = done
          lastProgressAt = Date.now()
        } else if (Date.now() - lastProgressAt > STALL_TIMEOUT_MS) {
          throw new Error(`no job completed for ${STALL_TIMEOUT_MS} ms (${done} of ${jobs} done)`)
        }
        for (const child of children) {
          if (child.child.exitCode !== null || child.child.signalCode !== null)
            throw new Error(`a worker exited during the run; stderr:\n${child.stderr()}`)
        }
      }
      const reports = await Promise.all(
        children.map((child) => {
          const report = child.next<Report>('report', READY_TIMEOUT_MS)
          child.send({ type: 'report' })
          return report
        }),
      )
      const completed = reports.reduce((sum, report) => sum + report.completed, 0)
      if (completed !== jobs) throw new Error(`the workers completed ${completed} of ${jobs} jobs`)
      const end = reports.reduce((max, report) => {
        const ns = BigInt(report.lastCompletedNs)
        return ns > max ? ns : max
      }, 0n)
      return Number(end - start) / 1e9
    } finally {
      for (const child of children) child.send({ type: 'stop' })
      await Promise.all(children.map((child) => child.exited(10_000)))
      await bench.close()
    }
  })
}

async function measureExecutorAlone(
  strategy: Strategy,
  jobs: number,
  poolSize: number,
  inFlight: number,
): Promise<number> {
  const warmUp = strategy === 'fork' ? 1 : 20 * inFlight
  const child = startFixture('executor-alone.mjs', [
    strategy,
    NOOP_HANDLERS,
    String(jobs),
    String(warmUp),
    String(poolSize),
    String(inFlight),
  ])
  await child.exited(5 * 60_000)
  if (child.child.exitCode !== 0) {
    throw new Error(
      `executor-alone.mjs exited (code ${child.child.exitCode}, signal ${child.child.signalCode}); stderr:\n${child.stderr()}`,
    )
  }
  const result = JSON.parse(child.stdout().trim()) as { jobs: number; seconds: number }
  if (result.jobs !== jobs) throw new Error(`executor-alone.mjs ran ${result.jobs} of ${jobs} jobs`)
  return result.seconds
}

export const strategyOverheadScenario: ScenarioDef = {
  name: 'strategy-overhead',
  summary:
    'no-op jobs through 1 and 2 worker processes per strategy (fork: a fortieth), durability full and normal; and the executor alone: back to back, and saturated (threads, processes)',
  fullSize: 2_000,
  quickSize: 100,
  run: strategyOverhead,
  targets: {
    'inline.executor_ms_per_job': { op: '<', value: 0.05 },
    'threads.executor_ms_per_job': { op: '<', value: 0.1 },
    'processes.executor_ms_per_job': { op: '<', value: 0.15 },
  },
}
