import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { SqliteDurability } from '../../src/sqlite.js'
import { REPO_ROOT, WORKER_STARTED } from '../../tests/support/processes.js'

/** The `ferry` command, run from source as in development: `node --import tsx src/cli/main.ts`. */
const FERRY_CLI = join(REPO_ROOT, 'src', 'cli', 'main.ts')
/** The handler module the child workers load (bench.wake, bench.noop). */
const BENCH_HANDLERS = join(REPO_ROOT, 'bench', 'fixtures', 'handlers.ts')

const READY_TIMEOUT_MS = 60_000
const EXIT_TIMEOUT_MS = 5_000

export interface ChildWorkerOptions {
  /** The `--store` URL (the store should exist, migrated, already). */
  storeUrl: string
  /**
   * The worker stops itself after this long (`--time-limit`): a watchdog, so a child outlives
   * this process by at most this much even if this process is SIGKILLed and cannot kill it.
   */
  timeLimitMs: number
  queues?: readonly string[]
  concurrency?: number
}

export interface ChildWorker {
  readonly pid: number
  /** Every line the child prints on stdout (the handlers' reports). */
  onLine(listener: (line: string) => void): void
  /** Throws, with the child's stderr, if it has exited. */
  assertAlive(): void
  /** SIGTERM (the CLI stops gracefully), then SIGKILL if it has not exited within 5 s. */
  stop(): Promise<void>
}

/** The `--store` URL of a SQLite database file. */
export function sqliteStoreUrl(dbPath: string, durability: SqliteDurability): string {
  return `sqlite://${dbPath}${durability === 'full' ? '' : `?durability=${durability}`}`
}

// Children alive now: killed when this process exits, whatever the path (an uncaught error,
// process.exit, the end of the event loop). A SIGKILL of this process leaves the watchdog.
const live = new Set<ChildProcess>()
let exitHookInstalled = false

function killAllNow(): void {
  for (const child of live) child.kill('SIGKILL')
}

/**
 * Starts `ferry work --handlers bench/fixtures/handlers.ts --store <storeUrl>` in a child process
 * and resolves once it says it is running. Once `stop()` resolves the child has exited, so its
 * database can be removed.
 */
export async function startChildWorker(options: ChildWorkerOptions): Promise<ChildWorker> {
  const args = [
    '--import',
    'tsx',
    FERRY_CLI,
    '--store',
    options.storeUrl,
    'work',
    '--handlers',
    BENCH_HANDLERS,
    '--queues',
    (options.queues ?? ['default']).join(','),
    '--concurrency',
    String(options.concurrency ?? 10),
    '--time-limit',
    `${Math.ceil(options.timeLimitMs / 1000)}s`,
  ]
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  live.add(child)
  if (!exitHookInstalled) {
    process.on('exit', killAllNow)
    exitHookInstalled = true
  }
  let stderr = ''
  child.stderr!.setEncoding('utf8')
  child.stderr!.on('data', (chunk: string) => {
    stderr += chunk
  })
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve())
    child.once('error', () => resolve()) // it never started
  })
  const hasExited = (): boolean => child.exitCode !== null || child.signalCode !== null
  const describeExit = (): string =>
    `the child worker exited (code ${child.exitCode}, signal ${child.signalCode}); stderr:\n${stderr}`
  const stop = async (): Promise<void> => {
    if (!hasExited()) {
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_TIMEOUT_MS)
      await exited
      clearTimeout(timer)
    }
    live.delete(child)
  }
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`the child worker did not start within ${READY_TIMEOUT_MS} ms; stderr:\n${stderr}`),
          ),
        READY_TIMEOUT_MS,
      )
      const onData = (): void => {
        if (!WORKER_STARTED.test(stderr)) return
        done()
        resolve()
      }
      const onExit = (): void => {
        done()
        reject(new Error(describeExit()))
      }
      const onError = (error: Error): void => {
        done()
        reject(error)
      }
      const done = (): void => {
        clearTimeout(timer)
        child.stderr!.off('data', onData)
        child.off('exit', onExit)
        child.off('error', onError)
      }
      child.stderr!.on('data', onData)
      child.once('exit', onExit)
      child.once('error', onError)
    })
  } catch (error) {
    await stop()
    throw error
  }
  const lines = createInterface({ input: child.stdout!, crlfDelay: Infinity })
  return {
    pid: child.pid!,
    onLine: (listener) => lines.on('line', listener),
    assertAlive: () => {
      if (hasExited()) throw new Error(describeExit())
    },
    stop,
  }
}

/** Runs fn with a child worker (startChildWorker), stopping it however fn ends. */
export async function withChildWorker<T>(
  options: ChildWorkerOptions,
  fn: (child: ChildWorker) => Promise<T>,
): Promise<T> {
  const child = await startChildWorker(options)
  try {
    return await fn(child)
  } finally {
    await child.stop()
  }
}
