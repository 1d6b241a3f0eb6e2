/**
 * Runs `chaos/main.ts` as `npm run chaos` does (without the build: the test run built dist/
 * already), for the chaos tests: its output, its exit code, and the counts of its tables.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'

import { within } from '../support/async.js'
import { postgresUnreachableReason } from '../support/postgres-harness.js'
import { REPO_ROOT } from '../support/processes.js'
import { ownServerOptions } from '../support/redis-harness.js'
import { skipUnlessAvailable } from '../support/services.js'

/**
 * The stores a chaos run goes on, each with why it is skipped (undefined: it runs). PostgreSQL needs
 * the test server (a database of its own is made and dropped there), Redis the redis-server binary
 * (a server of its own with AOF always); outside CI a run that cannot have them is skipped, saying
 * why, and under CI it fails.
 */
export const CHAOS_STORES: readonly { store: string; skip: string | undefined }[] = [
  { store: 'sqlite', skip: undefined },
  { store: 'postgres', skip: skipUnlessAvailable(await postgresUnreachableReason()).skip },
  { store: 'redis', skip: ownServerOptions().skip },
]

export interface ChaosOutput {
  code: number | null
  /** stdout and stderr, interleaved. */
  output: string
}

/** Fails, with the output so far, if the run takes longer than `timeoutMs`; the run is killed then. */
export async function runChaosMain(args: readonly string[], timeoutMs: number): Promise<ChaosOutput> {
  const env = { ...process.env }
  delete env.NODE_TEST_CONTEXT
  const child = spawn(process.execPath, ['--import', 'tsx', join('chaos', 'main.ts'), ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: a run that hangs is killed with every process it started.
    detached: true,
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  try {
    return { code: await within(timeoutMs, `npm run chaos -- ${args.join(' ')}`, exited), output }
  } catch (error) {
    process.kill(-child.pid!, 'SIGKILL')
    throw new Error(`${(error as Error).message}\n${output}`, { cause: error })
  }
}

/** The value of a `| label | value |` row of the output (`label` a regular expression). */
export function tableCount(output: string, label: string): number {
  return Number(new RegExp(`^\\| ${label} +\\| +(\\d+) \\|$`, 'm').exec(output)?.[1])
}
