/**
 * Shared by the tests of the `ferry` command, which run it with runCli (tests/support/processes.ts)
 * against a temp SQLite file: seeds that file with finished jobs through the store itself.
 */
import type { JobError, Store } from '../../src/index.js'

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
