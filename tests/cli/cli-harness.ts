/**
 * Shared by the tests of the `ferry` command: runs the real command (src/cli/main.ts through tsx,
 * so no build is needed) as a child process against a temp SQLite file, and seeds that file with
 * jobs in every state through the store itself.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

import type { JobError, Store } from '../../src/index.js'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const MAIN = join(ROOT, 'src', 'cli', 'main.ts')

export { allJobs } from '../support/store-harness.js'
export { tempDatabase, type TempDatabase } from '../support/sqlite-harness.js'

/**
 * Starts `ferry --store <url> ...args` with pipes for every stream (so nothing is a TTY), and no
 * colour unless `env` asks for it: node --test sets FORCE_COLOR for test files when its own output
 * is a terminal.
 */
export function spawnFerry(
  url: string,
  args: readonly string[],
  extraEnv: Record<string, string> = {},
): ChildProcessWithoutNullStreams {
  const env: NodeJS.ProcessEnv = { ...process.env, CI: 'true' }
  delete env.FERRY_STORE
  delete env.FORCE_COLOR
  delete env.NO_COLOR
  Object.assign(env, extraEnv)
  return spawn(process.execPath, ['--import', 'tsx', MAIN, '--store', url, ...args], { cwd: ROOT, env })
}

export interface FerryResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs `ferry --store <url> ...args` to its end, with `input` on its stdin and `env` added. */
export function runFerry(
  url: string,
  args: readonly string[],
  input = '',
  env: Record<string, string> = {},
): Promise<FerryResult> {
  return new Promise((resolve, reject) => {
    const child = spawnFerry(url, args, env)
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

export const HANDLER_ERROR: JobError = {
  kind: 'error',
  name: 'TypeError',
  message: 'cannot read properties of undefined (reading "address") while rendering the welcome template',
  stack:
    'TypeError: cannot read properties of undefined\n    at render (jobs.js:12:7)\n    at send (jobs.js:30:3)',
}

/**
 * Claims the oldest ready job of `queue` and settles it as completed (with `result`) or dead (with
 * HANDLER_ERROR), finishing at `finishedAt`. Returns its id.
 */
export async function finishJob(
  store: Store,
  queue: string,
  outcome: 'completed' | 'dead',
  { result = null as unknown, finishedAt = Date.now() } = {},
): Promise<string> {
  const [job] = await store.claim({ queues: [queue], limit: 1, leaseMs: 60_000, workerId: 'test-worker' })
  if (job === undefined) throw new Error(`no ready job on queue ${queue} to finish`)
  const { id, leaseToken } = job
  const [settled] = (
    await store.settle({
      settlements: [
        outcome === 'completed'
          ? { kind: 'completed', id, leaseToken, result }
          : { kind: 'dead', id, leaseToken, error: HANDLER_ERROR },
      ],
      now: finishedAt,
    })
  ).settled
  if (settled !== 'ok') throw new Error(`could not settle job ${id}: ${settled}`)
  return id
}
