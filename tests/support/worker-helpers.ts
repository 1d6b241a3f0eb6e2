/**
 * Helpers for the worker tests: temp SQLite stores, workers and `ferry` processes that are always
 * cleaned up (even when the test fails), and ways to await what a worker does instead of sleeping.
 *
 * Cleanup runs last-in first-out in one `after` hook per test, so a worker started on a store is
 * stopped before that store is closed, and child processes are killed before their directory goes.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import type { EventEmitter } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'

import { Worker, type Job, type StopReason, type Store, type WorkerOptions } from '../../src/index.js'
import { SqliteStore, type SqliteStoreOptions } from '../../src/sqlite.js'
import { getJob as findJob } from './store-calls.js'

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))
const FERRY_MAIN = join(REPO_ROOT, 'src', 'cli', 'main.ts')

/** The absolute path of a handler module in tests/support/handlers. */
export function fixtureHandlers(file: string): string {
  return join(REPO_ROOT, 'tests', 'support', 'handlers', file)
}

// ── cleanup ──────────────────────────────────────────────────────────────────────────────────

const cleanups = new WeakMap<TestContext, (() => unknown)[]>()

/** Runs `fn` after the test, before everything deferred earlier in the same test. */
export function defer(t: TestContext, fn: () => unknown): void {
  let stack = cleanups.get(t)
  if (stack === undefined) {
    const created: (() => unknown)[] = []
    stack = created
    cleanups.set(t, created)
    t.after(async () => {
      let firstError: unknown = null
      while (created.length > 0) {
        try {
          await created.pop()!()
        } catch (error) {
          firstError ??= error
        }
      }
      if (firstError !== null) throw firstError
    })
  }
  stack.push(fn)
}

/** Rejects if `promise` has not settled within `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

export interface Deferred<T> {
  promise: Promise<T>
  resolve: (value: T) => void
}

/** A promise and its resolve function (Promise.withResolvers is Node 22). */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

// ── waiting ──────────────────────────────────────────────────────────────────────────────────

/**
 * Resolves with the arguments of the first `name` event for which `predicate` holds. Create the
 * promise before doing what causes the event; await it after.
 */
export function waitForEvent<T extends Record<keyof T, unknown[]>, K extends keyof T & string>(
  emitter: EventEmitter<T>,
  name: K,
  predicate: (...args: T[K]) => boolean = () => true,
  timeoutMs = 5000,
): Promise<T[K]> {
  // The typed overloads do not accept a generic key: listen through the untyped interface.
  const plain = emitter as unknown as EventEmitter
  const promise = new Promise<T[K]>((resolve, reject) => {
    const listener = (...args: unknown[]): void => {
      if (!predicate(...(args as T[K]))) return
      cleanup()
      resolve(args as T[K])
    }
    const timer = setTimeout(() => {
      cleanup()
      reject(new Error(`no '${name}' event (matching the predicate) within ${timeoutMs} ms`))
    }, timeoutMs)
    const cleanup = (): void => {
      clearTimeout(timer)
      plain.off(name, listener)
    }
    plain.on(name, listener)
  })
  // Awaited later: a timeout before then must not count as an unhandled rejection.
  promise.catch(() => undefined)
  return promise
}

/** Resolves with the first truthy value of `check`, called every `intervalMs`. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 5000,
  what = 'the condition',
  intervalMs = 20,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value) return value as NonNullable<T>
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`)
    await sleep(intervalMs)
  }
}

// ── stores ───────────────────────────────────────────────────────────────────────────────────

export interface TempStore {
  dir: string
  path: string
  /** The store URL for `ferry --store`. */
  url: string
  store: SqliteStore
  /** Another connection to the same file, as another process would have. */
  openPeer(options?: Partial<SqliteStoreOptions>): Promise<SqliteStore>
}

/** A fresh database file in its own temp directory, closed and removed after the test. */
export async function tempStore(t: TestContext): Promise<TempStore> {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-worker-'))
  defer(t, () => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'ferry.db')
  const openPeer = async (options: Partial<SqliteStoreOptions> = {}): Promise<SqliteStore> => {
    const store = await SqliteStore.open({ ...options, path })
    defer(t, () => store.close())
    return store
  }
  const store = await openPeer()
  return { dir, path, url: `sqlite://${path}`, store, openPeer }
}

export async function getJob(store: Store, id: string): Promise<Job> {
  const job = await findJob(store, id)
  if (job === null) throw new Error(`job ${id} is missing`)
  return job
}

// ── workers ──────────────────────────────────────────────────────────────────────────────────

export interface StartedWorker {
  worker: Worker
  /** Every 'worker:error' the worker emitted. */
  errors: unknown[]
}

/**
 * A worker, not started yet (attach listeners first, then `await worker.start()`), that is
 * stopped (hard) after the test if it is still running.
 */
export function createWorker(t: TestContext, options: WorkerOptions): StartedWorker {
  const worker = new Worker(options)
  const errors: unknown[] = []
  worker.on('worker:error', (error) => errors.push(error))
  defer(t, () => stopWorker(worker, { graceful: false }))
  return { worker, errors }
}

/** Stops a worker, failing instead of hanging if it does not stop within 5 s. */
export function stopWorker(worker: Worker, options?: { graceful?: boolean }): Promise<StopReason> {
  return withTimeout(worker.stop(options), 5000, `stopping worker ${worker.workerId}`)
}

/** createWorker, started. */
export async function startWorker(t: TestContext, options: WorkerOptions): Promise<StartedWorker> {
  const started = createWorker(t, options)
  await started.worker.start()
  return started
}

// ── ferry processes ──────────────────────────────────────────────────────────────────────────

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
  // No colour unless asked: node --test sets FORCE_COLOR for test files when it writes to a terminal.
  const env: NodeJS.ProcessEnv = { ...process.env, FORCE_COLOR: undefined, NO_COLOR: undefined, ...extraEnv }
  delete env.FERRY_STORE
  delete env.NODE_TEST_CONTEXT
  const child = spawn(process.execPath, ['--import', 'tsx', FERRY_MAIN, ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
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
        return await withTimeout(exited, timeoutMs, `ferry ${args.join(' ')}`)
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

/** The line `ferry work` prints once its worker is claiming. */
export const WORKER_STARTED = /^ferry: worker \S+ on /m

export { allJobs } from './store-harness.js'

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
