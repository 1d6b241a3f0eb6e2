import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { HandlerSource } from '../handler-module.js'
import type { ChildMessage } from './child/protocol.js'
import {
  ChildPool,
  forEachLine,
  type ChildEvents,
  type ChildHandle,
  type PoolExecutorOptions,
} from './child-pool.js'

export type ProcessesExecutorOptions = PoolExecutorOptions

/**
 * Runs handlers in a persistent pool of child processes that each load the handler module once
 * and run many jobs, one at a time (the php-fpm idea): full isolation (a crash, process.exit, a
 * signal, running out of memory or a blocked event loop fails only that job, with its real
 * cause) for an IPC round trip per job instead of a process start.
 */
export class ProcessesExecutor extends ChildPool {
  constructor(handlers: HandlerSource, options: ProcessesExecutorOptions = {}) {
    super(handlers, options, processPoolConfig('processes', options, false))
  }
}

/** How the processes and fork strategies start their children. */
export function processPoolConfig(
  strategy: 'processes' | 'fork',
  options: PoolExecutorOptions,
  spawnOnDemand: boolean,
): ConstructorParameters<typeof ChildPool>[2] {
  const heapLimitMb = options.maxHeapMb ?? null
  const killGraceMs = options.killGraceMs ?? 2000
  const { entry, execArgv } = childEntry(heapLimitMb)
  return {
    strategy,
    noun: 'process',
    spawnOnDemand,
    heapLimitMb,
    spawn: (events) => spawnProcess(entry, execArgv, killGraceMs, events),
  }
}

function spawnProcess(
  entry: string,
  execArgv: string[],
  killGraceMs: number,
  events: ChildEvents,
): ChildHandle {
  const child = fork(entry, [], { execArgv, stdio: ['ignore', 'pipe', 'pipe', 'ipc'], serialization: 'json' })
  let sigkillTimer: NodeJS.Timeout | null = null
  let ended = false
  const end = (exitCode: number | null, signal: string | null): void => {
    if (ended) return
    ended = true
    if (sigkillTimer !== null) clearTimeout(sigkillTimer)
    events.exit({ exitCode, signal, outOfMemory: false })
  }
  forEachLine(child.stdout!, (line) => events.line('stdout', line))
  forEachLine(child.stderr!, (line) => events.line('stderr', line))
  child.on('message', (message) => events.message(message as ChildMessage))
  // 'close' comes after the output streams ended, so the stderr tail is complete.
  child.on('close', (code, signal) => end(code, signal))
  child.on('error', (error) => {
    // Spawning failed (no 'exit' follows) or a send failed (the exit event tells the rest).
    if (child.pid === undefined) {
      events.line('stderr', `cannot start a child process: ${error.message}`)
      end(null, null)
    }
  })
  return {
    label: String(child.pid),
    send(message) {
      // A send to a child that just died fails; its exit reports why.
      if (child.connected) child.send(message, () => {})
    },
    kill() {
      if (ended || sigkillTimer !== null) return
      child.kill('SIGTERM')
      sigkillTimer = setTimeout(() => child.kill('SIGKILL'), killGraceMs)
    },
  }
}

/**
 * The compiled entry beside this file; under tsx (tests run the TypeScript sources) the .ts one,
 * which needs tsx in the child too. Children get only the node flags they need, not the
 * worker's: `--test` or `--inspect` would break them, a heap flag would fight maxHeapMb.
 */
function childEntry(heapLimitMb: number | null): { entry: string; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith('.ts')
  const entry = fileURLToPath(new URL(`./child/process-entry.${fromSource ? 'ts' : 'js'}`, import.meta.url))
  const execArgv = inheritedLoaderFlags()
  if (fromSource && !hasTsx(execArgv)) execArgv.push('--import', import.meta.resolve('tsx'))
  if (heapLimitMb !== null) execArgv.push(`--max-old-space-size=${heapLimitMb}`)
  return { entry, execArgv }
}

const LOADER_FLAGS = new Set([
  '--import',
  '--require',
  '-r',
  '--loader',
  '--experimental-loader',
  '--conditions',
  '-C',
])

/** The worker's module loaders (and source maps): a handler module may need them. */
function inheritedLoaderFlags(): string[] {
  const kept: string[] = []
  const argv = process.execArgv
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!
    const name = flag.split('=', 1)[0]!
    if (LOADER_FLAGS.has(name)) {
      if (flag.includes('=') || i + 1 >= argv.length) kept.push(flag)
      else kept.push(flag, argv[++i]!)
    } else if (flag === '--enable-source-maps') {
      kept.push(flag)
    }
  }
  return kept
}

function hasTsx(execArgv: string[]): boolean {
  return execArgv.some((flag) => flag === 'tsx' || flag.endsWith('=tsx') || /[/\\]tsx[/\\]/.test(flag))
}
