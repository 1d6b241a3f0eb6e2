/**
 * Starting and stopping the processes of a chaos run: what every chaos supervisor does alike.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'

/** The environment of every chaos process: a run under node:test must not make them report to it. */
const CHILD_ENV = { ...process.env }
delete CHILD_ENV.NODE_TEST_CONTEXT

/** Runs a built chaos script (chaos/build.ts) under plain node, its stdout and stderr appended to `logPath`. */
export function spawnChaosProcess(
  args: readonly string[],
  logPath: string,
  options: { ipc?: boolean } = {},
): ChildProcess {
  const output = openSync(logPath, 'a')
  try {
    return spawn(process.execPath, args, {
      env: CHILD_ENV,
      stdio: ['ignore', output, output, ...(options.ipc === true ? (['ipc'] as const) : [])],
    })
  } finally {
    closeSync(output)
  }
}

export interface ChaosProcess {
  child: ChildProcess | null
  /** Resolves once the current process has exited. */
  exited: Promise<void>
}

/** Waits until every process has exited; those still there after `graceMs` get `kill`. */
export async function awaitExits<T extends ChaosProcess>(
  processes: readonly T[],
  kill: (process: T) => void,
  graceMs = 20_000,
): Promise<void> {
  const timer = setTimeout(() => {
    for (const slot of processes) if (slot.child !== null) kill(slot)
  }, graceMs)
  await Promise.all(processes.map((slot) => slot.exited))
  clearTimeout(timer)
}
