import { PassThrough } from 'node:stream'
import { AttemptAbort, type ExecutionOutcome, type Executor } from '../../src/worker/executors/executor.js'
import type { ChildPool } from '../../src/worker/executors/pool/child-pool.js'
import type { PoolExecutorOptions } from '../../src/worker/executors/pool/pool-options.js'
import { ProcessesExecutor, ThreadsExecutor } from '../../src/worker/executors/pool-executors.js'
import { claimedJob } from '../conformance/executor.case.js'

export const POOL_HANDLERS = new URL('../support/handlers/pool.ts', import.meta.url)
export const BROKEN_HANDLERS = new URL('../support/handlers/pool-broken.ts', import.meta.url)

/** What the `timed` handler returns: where it ran, and when (Date.now()) it started and ended. */
export interface Timed {
  where: string
  start: number
  end: number
}

/** The pooled strategies, each with a started pool of POOL_HANDLERS (one child unless `size` says otherwise). */
export const POOLED: [string, (options?: PoolExecutorOptions) => Promise<ChildPool>][] = [
  ['processes', (options) => startedPool(new ProcessesExecutor(POOL_HANDLERS, poolOptions(options)))],
  ['threads', (options) => startedPool(new ThreadsExecutor(POOL_HANDLERS, poolOptions(options)))],
]

function poolOptions(options: PoolExecutorOptions = {}): PoolExecutorOptions {
  return { size: 1, stdout: capture().stream, stderr: capture().stream, ...options }
}

async function startedPool(executor: ChildPool): Promise<ChildPool> {
  await executor.start()
  return executor
}

/** Runs one job to its outcome; `abortAfterMs` aborts it like the worker's timeout would. */
export async function runJob(
  executor: Executor,
  name: string,
  payload: unknown = null,
  abortAfterMs?: number,
): Promise<ExecutionOutcome> {
  const abort = new AttemptAbort()
  const timer =
    abortAfterMs === undefined
      ? null
      : setTimeout(() => abort.abort(new Error(`timed out after ${abortAfterMs} ms`)), abortAfterMs)
  try {
    return await executor.run({ job: claimedJob(name, payload), abort })
  } finally {
    if (timer !== null) clearTimeout(timer)
  }
}

export function completedResult(outcome: ExecutionOutcome): unknown {
  if (outcome.kind !== 'completed') throw new Error(`expected completed, got ${JSON.stringify(outcome)}`)
  return outcome.result
}

/** A stream that keeps what is written to it, for the executors' stdout/stderr options. */
export function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough()
  let text = ''
  stream.setEncoding('utf8')
  stream.on('data', (chunk: string) => (text += chunk))
  return { stream, text: () => text }
}
