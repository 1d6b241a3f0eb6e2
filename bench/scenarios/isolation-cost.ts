import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import type { JobSpec } from '../../src/client/client.js'
import { sqliteStoreUrl } from '../lib/child-worker.js'
import { DIST_CLI, ensureBuilt } from '../lib/dist.js'
import { fixturePath } from '../lib/fixture-process.js'
import { median } from '../lib/stats.js'
import { openBenchStore } from '../lib/store.js'
import { withTempDir } from '../lib/temp.js'
import type { Figure, ScenarioDef } from '../lib/types.js'
import { REPO_ROOT, WORKER_STARTED } from '../../tests/support/processes.js'

type Strategy = 'inline' | 'threads' | 'processes' | 'fork'

const STRATEGIES: readonly Strategy[] = ['inline', 'threads', 'processes', 'fork']
const ISOLATING: readonly Strategy[] = ['threads', 'processes', 'fork']
const HANDLERS = fixturePath('marked-noop-handlers.mjs')
const JOB_NAME = 'bench.noop'
/**
 * Each strategy runs this many times per run, in turn, each round in another order: the machine's
 * load then weighs on every strategy alike, and a difference is taken within one round.
 */
const ROUNDS = 3
/** fork starts a Node process per job (~80 ms here): a fortieth of the jobs measures the same cost. */
const FORK_SHARE = 0.025
const READY_TIMEOUT_MS = 30_000
/** No 'mark last' for this long: the worker is stuck, the run fails. */
const RUN_TIMEOUT_MS = 5 * 60_000
const EXIT_TIMEOUT_MS = 10_000
const MARK_LINE = /mark (first|last) (\d+)/

const fmt = (n: number): string => n.toLocaleString('en-US')
const jobsFor = (strategy: Strategy, size: number): number =>
  Math.max(3, Math.round(strategy === 'fork' ? size * FORK_SHARE : size))

/**
 * Issue 20's form of the php-resque report's benchmark: `size` no-op jobs through the `ferry work
 * --concurrency 1 --strategy <s>` command itself (the compiled CLI in plain Node, every other
 * option at its default, prefetch 'auto' included) on a SQLite store under durability 'full'. The
 * worker starts on an empty queue and says it runs (its pool started: start-up is not measured),
 * then the jobs are enqueued in one call. The first and the last job print the time their handler
 * ran (marked-noop-handlers.mjs); ms per job = that interval / (jobs - 1): every job's claim,
 * hand-over, run, reply and settlement commit, in the steady state. What isolation costs is each
 * strategy's ms per job minus inline's in the same round (median over the rounds).
 */
export async function isolationCost(size: number): Promise<Figure[]> {
  ensureBuilt()
  const perJob = new Map<Strategy, number[]>(STRATEGIES.map((s) => [s, []]))
  for (let round = 0; round < ROUNDS; round++) {
    // Rotated each round, so no strategy always runs first (or right after fork's process starts).
    const order = STRATEGIES.map((_, i) => STRATEGIES[(i + round) % STRATEGIES.length]!)
    for (const strategy of order)
      perJob.get(strategy)!.push(await measureCli(strategy, jobsFor(strategy, size)))
  }
  const figures: Figure[] = []
  const inline = perJob.get('inline')!
  for (const strategy of STRATEGIES) {
    const values = perJob.get(strategy)!
    figures.push({
      key: `${strategy}.ms_per_job`,
      label: `${strategy}: ms per job, ${fmt(jobsFor(strategy, size))} no-op jobs through ferry work --concurrency 1`,
      value: median(values),
      unit: 'ms',
    })
  }
  for (const strategy of ISOLATING) {
    const values = perJob.get(strategy)!
    figures.push({
      key: `${strategy}.minus_inline_ms_per_job`,
      label: `${strategy} minus inline: ms per job (same round, median of ${ROUNDS})`,
      value: median(values.map((value, i) => value - inline[i]!)),
      unit: 'ms',
      mayBeNegative: true,
    })
  }
  return figures
}

/** One `ferry work` process through `jobs` jobs: ms per job from the first job's handler to the last's. */
async function measureCli(strategy: Strategy, jobs: number): Promise<number> {
  return withTempDir('isolation-cost', async (dir) => {
    const bench = await openBenchStore(dir, 'full')
    let cli: ChildProcess | null = null
    try {
      cli = spawn(
        process.execPath,
        [
          DIST_CLI,
          '--store',
          sqliteStoreUrl(bench.path, 'full'),
          'work',
          '--handlers',
          HANDLERS,
          '--concurrency',
          '1',
          '--strategy',
          strategy,
        ],
        { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
      )
      const child = cli
      let stderr = ''
      child.stderr!.setEncoding('utf8')
      child.stderr!.on('data', (chunk: string) => (stderr += chunk))
      const marks = new Map<string, bigint>()
      let onMark: (() => void) | null = null
      createInterface({ input: child.stdout!, crlfDelay: Infinity }).on('line', (line) => {
        const match = MARK_LINE.exec(line)
        if (match === null) return
        marks.set(match[1]!, BigInt(match[2]!))
        onMark?.()
      })
      const until = (what: string, done: () => boolean, timeoutMs: number): Promise<void> =>
        new Promise((resolve, reject) => {
          const check = (): void => {
            if (!done()) return
            finish()
            resolve()
          }
          const onExit = (): void => {
            finish()
            reject(new Error(`ferry work exited before ${what} (code ${child.exitCode}); stderr:\n${stderr}`))
          }
          const timer = setTimeout(() => {
            finish()
            reject(new Error(`ferry work: no ${what} within ${timeoutMs} ms; stderr:\n${stderr}`))
          }, timeoutMs)
          const finish = (): void => {
            clearTimeout(timer)
            child.stderr!.off('data', check)
            child.off('exit', onExit)
            onMark = null
          }
          child.stderr!.on('data', check)
          child.once('exit', onExit)
          onMark = check
          check()
        })
      await until('ready line', () => WORKER_STARTED.test(stderr), READY_TIMEOUT_MS)
      const specs: JobSpec[] = Array.from({ length: jobs }, (_, i) => ({
        name: JOB_NAME,
        payload: i === 0 ? { seq: i, mark: 'first' } : i === jobs - 1 ? { seq: i, mark: 'last' } : { seq: i },
      }))
      await bench.client.enqueueMany(specs)
      await until("the last job's mark", () => marks.has('last'), RUN_TIMEOUT_MS)
      const first = marks.get('first')
      if (first === undefined) throw new Error('the last job ran before the first one printed its mark')
      const ms = Number(marks.get('last')! - first) / 1e6 / (jobs - 1)
      // Every job completed (the last one's settlement may still be on its way).
      const completed = async (): Promise<number> =>
        (await bench.store.stats()).reduce((sum, queue) => sum + queue.completed, 0)
      const deadline = Date.now() + EXIT_TIMEOUT_MS
      while ((await completed()) < jobs) {
        if (Date.now() > deadline) throw new Error(`only ${await completed()} of ${jobs} jobs completed`)
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      return ms
    } finally {
      if (cli !== null && cli.exitCode === null && cli.signalCode === null) {
        const exited = new Promise((resolve) => cli!.once('exit', resolve))
        cli.kill('SIGTERM')
        const timer = setTimeout(() => cli!.kill('SIGKILL'), EXIT_TIMEOUT_MS)
        await exited
        clearTimeout(timer)
      }
      await bench.close()
    }
  })
}

export const isolationCostScenario: ScenarioDef = {
  name: 'isolation-cost',
  summary:
    'no-op jobs through `ferry work --concurrency 1` per strategy (fork: a fortieth), durability full: ms per job, and each strategy minus inline in the same round',
  fullSize: 2_000,
  quickSize: 100,
  run: isolationCost,
  targets: {
    'threads.minus_inline_ms_per_job': { op: '<', value: 0.1 },
    'processes.minus_inline_ms_per_job': { op: '<', value: 0.15 },
  },
}
