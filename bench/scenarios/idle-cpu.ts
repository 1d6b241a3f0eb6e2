import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { SqliteStore } from '../../src/sqlite.js'
import { sqliteStoreUrl, withChildWorker } from '../lib/child-worker.js'
import { clockTicksPerSecond, processCpuTicks, threadTotals, type ThreadTotals } from '../lib/proc.js'
import { withTempDir } from '../lib/temp.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

/** After `ferry work` says it runs, before the first window. */
const SETTLE_MS = 2_000

interface Reading {
  atNs: bigint
  ticks: number
  threads: ThreadTotals
}

function read(pid: number): Reading {
  return { atNs: process.hrtime.bigint(), ticks: processCpuTicks(pid), threads: threadTotals(pid) }
}

/**
 * CPU an idle worker uses: `ferry work` in a child process (durability 'full', queue default, no
 * jobs) is left to settle for 2 s, then its CPU time is read at the start and end of two windows
 * of `seconds` each, back to back, while nothing happens (this process only sleeps). The first
 * window holds the start-up's late work: V8's memory reducer runs a few full GCs about 8 and 18 s
 * after start (and tsx's loader thread does the same), ~100–150 ms of CPU in all. The second
 * window (from 2 + `seconds` s) is the idle worker as it stays: the target is judged there.
 * Two readings of the same CPU time: utime + stime from /proc/<pid>/stat (clock ticks, every
 * thread's, usually 10 ms each — coarse over a short window), and the exact per-thread ns from
 * /proc/<pid>/task/<tid>/schedstat, with the threads' context switches (how often they woke).
 */
export async function idleCpu(seconds: number): Promise<Figure[]> {
  return withTempDir('idle-cpu', async (dir) => {
    const dbPath = join(dir, 'bench.db')
    // The database exists and is migrated before the worker starts, as in a deployment.
    await (await SqliteStore.open({ path: dbPath, durability: 'full' })).close()
    return idleWorkerCpu(sqliteStoreUrl(dbPath, 'full'), seconds, '')
  })
}

/**
 * idle-cpu's measurement for a worker on the store at `storeUrl` (existing, migrated); `tag` ends
 * every label (' [postgres]'), so the figures of several stores stay apart in one section.
 */
export async function idleWorkerCpu(storeUrl: string, seconds: number, tag: string): Promise<Figure[]> {
  const ticksPerSecond = clockTicksPerSecond()
  const timeLimitMs = SETTLE_MS + 2 * seconds * 1000 + 60_000
  return withChildWorker({ storeUrl, timeLimitMs }, async (child) => {
    await sleep(SETTLE_MS)
    child.assertAlive()
    const start = read(child.pid)
    await sleep(seconds * 1000)
    const middle = read(child.pid)
    await sleep(seconds * 1000)
    const end = read(child.pid)
    child.assertAlive()
    const wall = (a: Reading, b: Reading): number => Number(b.atNs - a.atNs) / 1e9
    const tickPct = (a: Reading, b: Reading): number =>
      (100 * (b.ticks - a.ticks)) / ticksPerSecond / wall(a, b)
    const settle = SETTLE_MS / 1000
    const steady = `${settle + seconds}–${settle + 2 * seconds} s after start`
    return [
      {
        key: 'startup.cpu_pct',
        label: `idle worker CPU ${settle}–${settle + seconds} s after start, % of one core (start-up GCs included)${tag}`,
        value: tickPct(start, middle),
        unit: '%',
        mayBeZero: true,
      },
      {
        key: 'cpu_pct',
        label: `idle worker CPU ${steady}, % of one core (/proc/<pid>/stat utime+stime, 1 tick = ${1000 / ticksPerSecond} ms)${tag}`,
        value: tickPct(middle, end),
        unit: '%',
        mayBeZero: true,
      },
      {
        key: 'cpu_pct_schedstat',
        label: `the same from per-thread schedstat (ns, ${end.threads.threads} threads)${tag}`,
        value: (100 * (end.threads.cpuNs - middle.threads.cpuNs)) / 1e9 / wall(middle, end),
        unit: '%',
        mayBeZero: true,
      },
      {
        key: 'wakeups_per_s',
        label: `thread wake-ups (context switches, all threads), ${steady}${tag}`,
        value: (end.threads.contextSwitches - middle.threads.contextSwitches) / wall(middle, end),
        unit: '/s',
        mayBeZero: true,
      },
    ]
  })
}

export const idleCpuScenario: ScenarioDef = {
  name: 'idle-cpu',
  summary:
    'CPU of an idle `ferry work` child process: 2–32 s after start, and 32–62 s (judged), durability full',
  fullSize: 30,
  quickSize: 2,
  run: idleCpu,
  targets: { cpu_pct: { op: '<', value: 0.1 } },
}
