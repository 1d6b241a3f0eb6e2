/**
 * What the Store conformance suite needs from a backend's test file, plus the small helpers the suite
 * uses. Nothing here knows which backend it runs against.
 */
import type { Job, JobId, NewJob } from '../../src/core/job.js'
import type { Store } from '../../src/store/store.js'

/** One fresh, empty, migrated store per test, and the means to open it again as another process would. */
export interface StoreHarness {
  store: Store
  /** A second independent store instance on the same data, as another process would open it; the harness closes it. */
  openPeer(): Promise<Store>
  /** Closes the store and every peer (closing one twice must be harmless), then removes the data. */
  close(): Promise<void>
  /**
   * The store's URL for openStore and `ferry --store`, for tests that run the same data from
   * another process (`ferry enqueue`, `ferry work`); those tests skip a harness without one.
   */
  url?: string
}

export type CreateHarness = () => Promise<StoreHarness>

/** A valid NewJob: queue 'default', name 'test-job', payload {"n":1}, due now, 25 attempts. */
export function newJob(overrides: Partial<NewJob> = {}): NewJob {
  return {
    queue: 'default',
    name: 'test-job',
    payload: '{"n":1}',
    priority: 0,
    runAt: null,
    delayMs: 0,
    maxAttempts: 25,
    timeoutMs: null,
    uniqueKey: null,
    uniqueUntil: 'purged',
    uniqueForMs: null,
    debounceMs: null,
    group: null,
    expiresAt: null,
    expiresInMs: null,
    schedule: null,
    backoff: null,
    keepForMs: null,
    ...overrides,
  }
}

/** Job ids are decimal digits that increase in enqueue order: compare them as integers, not text. */
export function compareIds(a: JobId, b: JobId): number {
  const x = BigInt(a)
  const y = BigInt(b)
  return x < y ? -1 : x > y ? 1 : 0
}

/** The ids sorted ascending, for comparing sets of ids whatever order a store returns them in. */
export function sortIds(ids: readonly JobId[]): JobId[] {
  return [...ids].sort(compareIds)
}

/** Every job in the store, oldest first. */
export async function allJobs(store: Store): Promise<Job[]> {
  const jobs: Job[] = []
  let cursor: string | null = null
  do {
    const page = await store.listJobs({ limit: 1000, ...(cursor === null ? {} : { cursor }) })
    jobs.push(...page.jobs)
    cursor = page.nextCursor
  } while (cursor !== null)
  return jobs.reverse()
}
