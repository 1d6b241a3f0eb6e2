/**
 * Helpers for the tests of what the processes and fork strategies leave running: the pids a
 * handler of tests/support/handlers/process-tree.mjs recorded, whether those processes still run,
 * and a safety net that SIGKILLs them after the test, so a failing test leaks nothing.
 */
import { readFileSync } from 'node:fs'
import type { TestContext } from 'node:test'

import { defer, waitFor } from './worker-helpers.js'

export interface RecordedPids {
  /** The process that ran the handler. */
  pid: number
  /** The `sleep 3000` it started (spawns-sleep only). */
  sleepPid?: number
}

/** What a handler wrote to `pidFile`, or null until it has. */
export function readPids(pidFile: string): RecordedPids | null {
  try {
    return JSON.parse(readFileSync(pidFile, 'utf8')) as RecordedPids
  } catch {
    return null
  }
}

/** Waits for a handler to record its pids (it runs), with a deadline for a loaded machine. */
export function waitForPids(pidFile: string, timeoutMs = 30_000): Promise<RecordedPids> {
  return waitFor(() => readPids(pidFile), timeoutMs, `a handler writing ${pidFile}`)
}

/**
 * Whether the process runs. A zombie (dead, not yet reaped by its parent) does not: a killed
 * grandchild stays one until whoever adopted it reaps it.
 */
export function isRunning(pid: number): boolean {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return false
  }
  // "pid (command) state …": the command may hold spaces and parentheses, the state follows the last ')'.
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  return state !== 'Z' && state !== 'X'
}

/** Resolves once none of these processes runs; fails after a deadline that only a leak reaches. */
export async function waitUntilGone(pids: number[], what: string, timeoutMs = 15_000): Promise<void> {
  await waitFor(
    () => pids.every((pid) => !isRunning(pid)),
    timeoutMs,
    `${what} (${pids.filter(isRunning).join(', ')} still running) being gone`,
  )
}

/** After the test, SIGKILLs every process recorded in these pid files that still runs. */
export function killRecordedAfter(t: TestContext, pidFiles: string[]): void {
  defer(t, () => {
    for (const file of pidFiles) {
      const pids = readPids(file)
      for (const pid of [pids?.pid, pids?.sleepPid]) {
        if (pid === undefined || pid === process.pid || !isRunning(pid)) continue
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // Ended meanwhile.
        }
      }
    }
  })
}
