/**
 * Processes in tests (and benchmarks): `ferry` started from this repository's sources, the pids
 * fixture handlers record, whether those processes still run, and a safety net that SIGKILLs what
 * a test started, so a failing test leaks nothing.
 */
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'

import { waitFor, within } from './async.js'
import { defer } from './cleanup.js'

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))
const FERRY_MAIN = join(REPO_ROOT, 'src', 'cli', 'main.ts')

// ── ferry processes ──────────────────────────────────────────────────────────────────────────

/**
 * `ferry <args>` from the sources (through tsx, so no build is needed), stdout and stderr piped so
 * nothing is a TTY. No store from this process's environment, and no colour unless `env` asks:
 * node --test sets FORCE_COLOR for test files when its own output is a terminal.
 */
function startFerry(
  args: readonly string[],
  { env: extraEnv, stdin }: { env: Record<string, string>; stdin: 'ignore' | 'pipe' },
): ChildProcess {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ['FERRY_STORE', 'NODE_TEST_CONTEXT', 'FORCE_COLOR', 'NO_COLOR']) delete env[name]
  return spawn(process.execPath, ['--import', 'tsx', FERRY_MAIN, ...args], {
    cwd: REPO_ROOT,
    env: { ...env, ...extraEnv },
    stdio: [stdin, 'pipe', 'pipe'],
  })
}

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

export interface FerryProcess {
  child: ChildProcess
  readonly stdout: string
  readonly stderr: string
  /** Resolves once the process exited and its output is drained. */
  exited: Promise<Exit>
  /** Resolves when stdout or stderr matches; rejects if the process exits first. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<void>
  /** Resolves with the exit, or rejects (and SIGKILLs the process) after `timeoutMs`. */
  waitForExit(timeoutMs?: number): Promise<Exit>
}

/** Starts `ferry <args>` from this repository's sources; SIGKILLed after the test if still running. */
export function spawnFerry(
  t: TestContext,
  args: string[],
  { env: extraEnv = {} }: { env?: Record<string, string> } = {},
): FerryProcess {
  const child = startFerry(args, { env: extraEnv, stdin: 'ignore' })
  let stdout = ''
  let stderr = ''
  const watchers = new Set<() => void>()
  child.stdout!.setEncoding('utf8')
  child.stderr!.setEncoding('utf8')
  child.stdout!.on('data', (chunk: string) => {
    stdout += chunk
    for (const watcher of watchers) watcher()
  })
  child.stderr!.on('data', (chunk: string) => {
    stderr += chunk
    for (const watcher of watchers) watcher()
  })
  let done = false
  const exited = new Promise<Exit>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => {
      done = true
      for (const watcher of watchers) watcher()
      resolve({ code, signal, stdout, stderr })
    })
  })
  exited.catch(() => undefined)
  defer(t, async () => {
    if (!done) child.kill('SIGKILL')
    await exited.catch(() => undefined)
  })
  const describe = (): string => `ferry ${args.join(' ')}\n--- stdout\n${stdout}--- stderr\n${stderr}`
  return {
    child,
    get stdout() {
      return stdout
    },
    get stderr() {
      return stderr
    },
    exited,
    // 30 s by default: a ferry process starts under tsx in 1–2 s here, but several starting at once
    // on a loaded machine took over 10 s; the wait only runs out when something is wrong.
    waitForOutput(pattern, timeoutMs = 30_000) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          watchers.delete(check)
          reject(new Error(`no output matching ${pattern} within ${timeoutMs} ms from ${describe()}`))
        }, timeoutMs)
        const check = (): void => {
          if (pattern.test(stdout) || pattern.test(stderr)) {
            watchers.delete(check)
            clearTimeout(timer)
            resolve()
          } else if (done) {
            watchers.delete(check)
            clearTimeout(timer)
            reject(
              new Error(
                `exited (${child.exitCode}, ${child.signalCode}) before printing ${pattern}: ${describe()}`,
              ),
            )
          }
        }
        watchers.add(check)
        check()
      })
    },
    async waitForExit(timeoutMs = 15_000) {
      try {
        return await within(timeoutMs, `ferry ${args.join(' ')}`, exited)
      } catch (error) {
        child.kill('SIGKILL')
        throw new Error(`${(error as Error).message}: ${describe()}`, { cause: error })
      }
    },
  }
}

/** Runs `ferry <args>` to its end. */
export function runFerry(t: TestContext, args: string[], timeoutMs = 20_000): Promise<Exit> {
  return spawnFerry(t, args).waitForExit(timeoutMs)
}

/**
 * The log record `ferry work` writes once its worker is claiming (its log is JSON lines on stderr
 * when stderr is not a terminal, as in every test).
 */
export const WORKER_STARTED = /^\{.*"event":"worker:started"/m

/** A line of `ferry work`'s log as its record, or null for another line (or one cut short). */
function parseLogLine(line: string): Record<string, unknown> | null {
  if (!line.startsWith('{')) return null
  try {
    return JSON.parse(line) as Record<string, unknown>
  } catch {
    return null
  }
}

/** The JSON log records in `ferry work`'s stderr; other lines (a child's forwarded output) are left out. */
export function logRecords(stderr: string): Record<string, unknown>[] {
  return stderr.split('\n').flatMap((line) => {
    const record = parseLogLine(line)
    return record === null ? [] : [record]
  })
}

/**
 * `ferry work`'s stderr with each JSON log record replaced by its message, other lines as they
 * are: what a test matches the worker's sentences against.
 */
export function logMessages(stderr: string): string {
  return stderr
    .split('\n')
    .map((line) => {
      const record = parseLogLine(line)
      return record === null ? line : String(record.msg)
    })
    .join('\n')
}

/**
 * Starts `ferry --store <url> ...args` as a user at a terminal-less shell would (CI=true), with a
 * pipe for stdin too; the caller ends it.
 */
export function spawnCli(
  url: string,
  args: readonly string[],
  env: Record<string, string> = {},
): ChildProcessWithoutNullStreams {
  return startFerry(['--store', url, ...args], {
    env: { CI: 'true', ...env },
    stdin: 'pipe',
  }) as ChildProcessWithoutNullStreams
}

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs `ferry --store <url> ...args` to its end, with `input` on its stdin and `env` added. */
export function runCli(
  url: string,
  args: readonly string[],
  input = '',
  env: Record<string, string> = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(url, args, env)
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    // A command that exits before reading its input closes the pipe: that is not the test's failure.
    child.stdin.on('error', () => {})
    child.stdin.end(input)
  })
}

// ── pids and process trees ───────────────────────────────────────────────────────────────────

/** The pid a fixture handler wrote to `file`, or null until it has. */
export function readPid(file: string): number | null {
  try {
    const text = readFileSync(file, 'utf8')
    return text === '' ? null : Number(text)
  } catch {
    return null
  }
}

/** Whether a process with this pid exists (EPERM: it exists, but is not ours to signal). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * The fields of /proc/<pid>/stat from the third (the state) on, or null when there is no such
 * process. The command before them is in parentheses and may itself hold spaces and parentheses,
 * so the fields start after the last ')'.
 */
export function procStat(pid: number): string[] | null {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return null
  }
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

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
  const state = procStat(pid)?.[0]
  return state !== undefined && state !== 'Z' && state !== 'X'
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
