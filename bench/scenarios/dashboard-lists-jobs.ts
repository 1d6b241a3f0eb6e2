import type { NewJob } from '../../src/core/job.js'

/** The dashboard-lists scenario's job number `i`: a small payload, one in 1,000 with a unique key. */
export function newJobOf(i: number, queue: string, name: string): NewJob {
  return {
    queue,
    name,
    payload: `{"i":${i},"user":{"id":${i % 977}}}`,
    priority: 0,
    runAt: null,
    delayMs: 0,
    maxAttempts: 25,
    timeoutMs: null,
    uniqueKey: i % 1000 === 7 ? `key-${i}` : null,
    uniqueUntil: 'purged',
    uniqueForMs: null,
    debounceMs: null,
    group: null,
    expiresAt: null,
    expiresInMs: null,
    schedule: null,
    backoff: null,
    keepForMs: null,
  }
}
