/** Jobs as a chaos run's dump holds them, for the checkers' hand-made runs. */
import type { Job } from '../../src/index.js'

/** A completed job, first attempt, created, updated and finished at `at`; the rest as given. */
export function dumpedJob(
  at: number,
  fields: Pick<Job, 'id' | 'queue' | 'name' | 'payload' | 'uniqueKey'> & Partial<Job>,
): Job {
  return {
    state: 'completed',
    priority: 0,
    runAt: at,
    attempts: 1,
    maxAttempts: 25,
    timeoutMs: null,
    schedule: null,
    backoff: null,
    keepForMs: null,
    trace: null,
    group: null,
    expiresAt: null,
    lastError: null,
    result: null,
    progress: null,
    logs: [],
    workerId: null,
    leaseExpiresAt: null,
    createdAt: at,
    updatedAt: at,
    finishedAt: at,
    ...fields,
  }
}
