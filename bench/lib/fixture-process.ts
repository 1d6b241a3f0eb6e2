import { fork, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { REPO_ROOT } from '../../tests/support/processes.js'

/** A plain .mjs handler module or script under bench/fixtures/. */
export const fixturePath = (file: string): string => join(REPO_ROOT, 'bench', 'fixtures', file)

// Children alive now: killed if this process exits first, whatever the path.
const live = new Set<ChildProcess>()
let exitHookInstalled = false

export interface FixtureProcess {
  readonly child: ChildProcess
  /** Everything it wrote on stdout so far. */
  stdout(): string
  /** Everything it wrote on stderr so far. */
  stderr(): string
  /** The next IPC message of this type (rejects if the child exits first or says {type:'error'}). */
  next<T extends { type: string }>(type: T['type'], timeoutMs: number): Promise<T>
  send(message: { type: string }): void
  /** Resolves once it exited; SIGKILL after `timeoutMs`. */
  exited(timeoutMs: number): Promise<void>
}

/**
 * Starts `node bench/fixtures/<file> ...args` with an IPC channel and no TypeScript loader
 * (execArgv empty: this process may run under tsx, whose loader costs a child ~0.7 s to start).
 */
export function startFixture(file: string, args: readonly string[]): FixtureProcess {
  const child = fork(fixturePath(file), [...args], {
    cwd: REPO_ROOT,
    execArgv: [],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    serialization: 'json',
  })
  live.add(child)
  if (!exitHookInstalled) {
    process.on('exit', () => {
      for (const c of live) c.kill('SIGKILL')
    })
    exitHookInstalled = true
  }
  let stderr = ''
  child.stderr!.setEncoding('utf8')
  child.stderr!.on('data', (chunk: string) => (stderr += chunk))
  let stdout = ''
  child.stdout!.setEncoding('utf8')
  child.stdout!.on('data', (chunk: string) => (stdout += chunk))
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      live.delete(child)
      resolve()
    })
    child.once('error', () => resolve())
  })
  const describe = (): string =>
    `${file} exited (code ${child.exitCode}, signal ${child.signalCode}); stderr:\n${stderr}`
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    next<T extends { type: string }>(type: T['type'], timeoutMs: number): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          done()
          reject(new Error(`${file}: no '${type}' message within ${timeoutMs} ms; stderr:\n${stderr}`))
        }, timeoutMs)
        const onMessage = (message: { type: string; message?: string }): void => {
          if (message.type === 'error') {
            done()
            reject(new Error(`${file}: ${message.message}`))
          } else if (message.type === type) {
            done()
            resolve(message as T)
          }
        }
        const onExit = (): void => {
          done()
          reject(new Error(describe()))
        }
        const done = (): void => {
          clearTimeout(timer)
          child.off('message', onMessage)
          child.off('exit', onExit)
        }
        child.on('message', onMessage)
        child.once('exit', onExit)
      })
    },
    send(message) {
      if (child.connected) child.send(message)
    },
    async exited(timeoutMs) {
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
      await exit
      clearTimeout(timer)
    },
  }
}
