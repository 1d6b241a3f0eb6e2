import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

import { procStat } from '../../tests/support/processes.js'

/** Clock ticks per second, the unit of utime/stime in /proc/<pid>/stat (`getconf CLK_TCK`). */
export function clockTicksPerSecond(): number {
  const text = execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()
  const ticks = Number(text)
  if (!Number.isInteger(ticks) || ticks <= 0) throw new Error(`getconf CLK_TCK printed "${text}"`)
  return ticks
}

/**
 * utime + stime of a process, in clock ticks, from /proc/<pid>/stat: every thread's, the ones
 * that already ended included. Fields 14 and 15, counted after the command name, which is in
 * parentheses and may itself contain spaces or parentheses.
 */
export function processCpuTicks(pid: number): number {
  const fields = statOf(pid)
  // fields[0] is field 3 (state): utime is field 14, stime field 15.
  const utime = Number(fields[11])
  const stime = Number(fields[12])
  if (!Number.isInteger(utime) || !Number.isInteger(stime))
    throw new Error(`cannot read utime/stime from /proc/${pid}/stat: ${fields.join(' ')}`)
  return utime + stime
}

export interface ThreadTotals {
  /** Nanoseconds on a CPU, summed over the threads alive now (the scheduler's exact count). */
  cpuNs: number
  /** Voluntary + involuntary context switches: how often the threads woke up and ran. */
  contextSwitches: number
  threads: number
}

/**
 * CPU time and context switches of every thread alive now, from /proc/<pid>/task/<tid>/schedstat
 * (first field: ns on a CPU) and .../status. Exact where /proc/<pid>/stat rounds to ticks; a
 * thread that ends between two readings takes its time with it, so compare readings taken while
 * the process is idle.
 */
export function threadTotals(pid: number): ThreadTotals {
  let cpuNs = 0
  let contextSwitches = 0
  let threads = 0
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let schedstat: string
    let status: string
    try {
      schedstat = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8')
      status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8')
    } catch {
      continue // the thread ended while we looked
    }
    cpuNs += Number(schedstat.split(' ')[0])
    for (const match of status.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm))
      contextSwitches += Number(match[1])
    threads++
  }
  return { cpuNs, contextSwitches, threads }
}

export interface ProcessCpu {
  /** utime + stime of the process itself, in clock ticks. */
  self: number
  /** cutime + cstime: every child it has waited for (reaped), their whole lives, in clock ticks. */
  children: number
}

/** Fields 14–17 of /proc/<pid>/stat: the process's own CPU time and its reaped children's. */
export function processCpu(pid: number): ProcessCpu {
  const fields = statOf(pid)
  // fields[0] is field 3: utime, stime, cutime, cstime are fields 14–17.
  const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number)
  if (![utime, stime, cutime, cstime].every((n) => Number.isInteger(n)))
    throw new Error(`cannot read CPU times from /proc/${pid}/stat: ${fields.join(' ')}`)
  return { self: utime! + stime!, children: cutime! + cstime! }
}

/** The pids whose parent is `pid` now (field 4 of every /proc/<n>/stat). */
export function childPids(pid: number): number[] {
  const pids: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    // Null when it ended while we looked.
    const fields = procStat(Number(name))
    if (fields !== null && Number(fields[1]) === pid) pids.push(Number(name))
  }
  return pids
}

/** procStat of a process that must exist. */
function statOf(pid: number): string[] {
  const fields = procStat(pid)
  if (fields === null) throw new Error(`no process ${pid} (/proc/${pid}/stat is missing)`)
  return fields
}
