/**
 * Workers in tests: created from the handler fixtures (tests/support/handlers), always stopped
 * after the test, even when it fails, and never left hanging on a stop.
 */
import { join } from 'node:path'
import type { TestContext } from 'node:test'

import { Worker, type StopReason, type WorkerOptions } from '../../src/index.js'
import { within } from './async.js'
import { defer } from './cleanup.js'
import { REPO_ROOT } from './processes.js'

/** The absolute path of a handler module in tests/support/handlers. */
export function fixtureHandlers(file: string): string {
  return join(REPO_ROOT, 'tests', 'support', 'handlers', file)
}

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
  return within(5000, `stopping worker ${worker.workerId}`, worker.stop(options))
}

/** createWorker, started. */
export async function startWorker(t: TestContext, options: WorkerOptions): Promise<StartedWorker> {
  const started = createWorker(t, options)
  await started.worker.start()
  return started
}
