import { spawn, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { ChildMessage } from '../child/protocol.js'
import type { ChildEvents, ChildHandle, ChildSpawner } from './child-handle.js'
import { forEachLine } from './for-each-line.js'
import type { PoolSettings } from './pool-options.js'

/**
 * Starts the children of the processes and fork strategies: `node` on the child entry
 * (child/process-entry.ts), with `--max-old-space-size` when there is a heap limit.
 */
export function processSpawner({ heapLimitMb, killGraceMs }: PoolSettings): ChildSpawner {
  const { entry, execArgv } = childEntry(heapLimitMb)
  // Found when the first child starts, not when the executor is made: the check runs a process.
  let command: ChildCommand | null = null
  return (events) => spawnProcess((command ??= childCommand(entry, execArgv)), killGraceMs, events)
}

/**
 * How a child is started, and how it ends.
 *
 * - A session and process group of its own (`detached`: setsid). A terminal's Ctrl-C signals the
 *   foreground process group, so it reaches the worker only, which lets running jobs finish; and
 *   what a handler starts (a `sleep`, an ffmpeg) joins the child's group, so one kill of the group
 *   ends the job's whole tree. A grandchild that starts a session or group of its own escapes it.
 * - The child ignores SIGINT and SIGTERM (child/process-entry.ts): systemd's default stop sends
 *   SIGTERM to every process of the service, not to a group. Only the pool decides when a child
 *   dies, so its kill is SIGKILL, to the whole group, after the abort message (or the exit request)
 *   and its grace period.
 * - It dies with the worker. A child whose IPC channel closes without it asking (the worker
 *   exited, crashed or was SIGKILLed) kills its own group; one whose event loop a CPU-bound
 *   handler blocks cannot notice, so where util-linux `setpriv` is available the kernel SIGKILLs
 *   the child when the thread that spawned it ends (the parent-death signal): the worker's main
 *   thread, so when the worker's process ends. The trade-off: that kill comes before the child can
 *   kill its group, so what its handlers started outlives a SIGKILLed worker (systemd, which kills
 *   what is left of a service whose main process died, ends it; a terminal does not). A blocked
 *   child burning a core for ever seemed the worse leak of the two.
 */
function spawnProcess(command: ChildCommand, killGraceMs: number, events: ChildEvents): ChildHandle {
  const child = spawn(command.file, command.args, {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    serialization: 'json',
    // On Windows, detached means a console of its own instead; it has no process groups.
    detached: process.platform !== 'win32',
  })
  let ended = false
  let closeTimer: NodeJS.Timeout | null = null
  const end = (exitCode: number | null, signal: string | null): void => {
    if (ended) return
    ended = true
    if (closeTimer !== null) clearTimeout(closeTimer)
    events.exit({ exitCode, signal, outOfMemory: false })
  }
  const killGroup = (): void => {
    if (child.pid === undefined) return
    try {
      process.kill(-child.pid, 'SIGKILL')
    } catch (error) {
      // ESRCH: nothing is left in the group. Anything else: no process groups here; the child alone.
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') child.kill('SIGKILL')
    }
  }
  forEachLine(child.stdout!, (line) => events.line('stdout', line))
  forEachLine(child.stderr!, (line) => events.line('stderr', line))
  child.on('message', (message) => events.message(message as ChildMessage))
  child.on('exit', (code, signal) => {
    // What its handlers started and left running (the child crashed, was killed, or exited when
    // asked while a process it started lived on) is still in its group: end it with the child.
    // A group's id is not reused while it has a member; an empty one the kill does not find (unless
    // a new process got the same pid and led a group of its own in the moment since the exit).
    killGroup()
    // 'close' waits for everything that holds the child's stdout and stderr; a grandchild that
    // escaped the group may hold them for ever, and the pool must still learn that the child ended.
    closeTimer = setTimeout(() => {
      // A turn of the loop first, so output the child wrote before it ended is read, not dropped.
      setImmediate(() => {
        child.stdout!.destroy()
        child.stderr!.destroy()
        end(code, signal)
      })
    }, killGraceMs)
  })
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
      if (!ended) killGroup()
    },
  }
}

interface ChildCommand {
  file: string
  args: string[]
}

/**
 * `node <execArgv> <entry>`, under `setpriv --pdeathsig KILL` where that works (Linux with
 * util-linux 2.33 or later): setpriv sets the parent-death signal, which survives the exec of
 * node, then execs it in its own place, so the child keeps its pid, its IPC channel (the
 * NODE_CHANNEL_FD descriptor and variable pass through the exec) and its node flags. It costs
 * each start about 6 ms (`node --version` took 5.4 ms, through setpriv 11.1 ms, best of 10 on the
 * development machine), against some 150 ms for a child's start with its module load. Checked once
 * per process by running that; where it fails node runs directly, and a child whose loop is
 * blocked outlives a SIGKILLed worker until its handler returns.
 */
function childCommand(entry: string, execArgv: string[]): ChildCommand {
  const node = [...execArgv, entry]
  if (!canSetParentDeathSignal()) return { file: process.execPath, args: node }
  return { file: 'setpriv', args: ['--pdeathsig', 'KILL', '--', process.execPath, ...node] }
}

let setprivWorks: boolean | null = null

function canSetParentDeathSignal(): boolean {
  if (setprivWorks === null) {
    // The parent-death signal is Linux's (prctl PR_SET_PDEATHSIG).
    if (process.platform !== 'linux') return (setprivWorks = false)
    const check = spawnSync('setpriv', ['--pdeathsig', 'KILL', '--', process.execPath, '--version'], {
      stdio: 'ignore',
      timeout: 10_000,
    })
    setprivWorks = check.error === undefined && check.status === 0
  }
  return setprivWorks
}

/**
 * The compiled entry beside this file; under tsx (tests run the TypeScript sources) the .ts one,
 * which needs tsx in the child too. Children get only the node flags they need, not the
 * worker's: `--test` or `--inspect` would break them, a heap flag would fight maxHeapMb.
 */
function childEntry(heapLimitMb: number | null): { entry: string; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith('.ts')
  const entry = fileURLToPath(new URL(`../child/process-entry.${fromSource ? 'ts' : 'js'}`, import.meta.url))
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
