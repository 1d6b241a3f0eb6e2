/**
 * What every area of the Store conformance suite shares: the test definers that
 * runStoreConformance hands each area (tests/conformance/store.case.ts), the time constants, and
 * the helpers the cases are written with. Nothing here knows which backend runs it.
 */
import assert from 'node:assert/strict'

import type { ClaimedJob, Job, JobId, NewJob } from '../../../src/core/job.js'
import type { Settlement } from '../../../src/core/outcome.js'
import { emptyStats } from '../../../src/store/kernel/stats.js'
import type { QueueStats, Store, WaitClaim, WaitParams, WaitResult } from '../../../src/store/store.js'
import { within } from '../../support/async.js'
import { getJob } from '../../support/store-calls.js'
import { newJob, type CreateHarness, type StoreHarness } from '../../support/store-harness.js'

/** How an area declares its cases; runStoreConformance applies the backend's skip list to each. */
export interface ConformanceCases {
  /** A test with a harness of its own, closed whatever happens. */
  test(title: string, body: (h: StoreHarness) => Promise<void>): void
  /** A test that manages its harness itself (through `createHarness`). */
  bare(title: string, body: () => Promise<void>): void
  /**
   * A test of waitForWork with a claim. On a store without capabilities.delivery it checks what
   * that promises instead: the store refuses the claim, so a worker is never handed jobs there.
   */
  deliveryTest(title: string, body: (h: StoreHarness, wait: WaitForJobs) => Promise<void>): void
  createHarness: CreateHarness
}

export const SECOND = 1000
export const MINUTE = 60 * SECOND
export const HOUR = 60 * MINUTE
export const LEASE_MS = 5 * MINUTE
/** An id no test ever creates. */
export const UNKNOWN_ID = '999999999'

export type WaitForJobs = (params: WaitParams & { claim: WaitClaim }) => Promise<WaitResult>

/**
 * What a waiter on 'default' (claiming up to 5) is handed when `count` jobs (each with `overrides`)
 * are enqueued through `peer` while it waits. The wait must be registered before the enqueue, which a slow machine may
 * miss: then the jobs are cancelled (left ready under a limit, they would end every next wait at
 * once) and it tries again, waiting longer first, up to 5 times.
 */
export async function deliveredOnEnqueue(
  h: StoreHarness,
  peer: Store,
  waitForJobs: WaitForJobs,
  count: number,
  overrides: Partial<NewJob> = {},
): Promise<WaitResult> {
  const claim = { limit: 5, leaseMs: LEASE_MS, workerId: 'waiter' }
  for (let attempt = 1; ; attempt++) {
    const waiting = waitForJobs({ queues: ['default'], timeoutMs: 3 * SECOND, claim })
    await new Promise((resolve) => setTimeout(resolve, 100 * attempt))
    const added = await enqueueJobs(
      peer,
      Date.now(),
      Array.from({ length: count }, () => overrides),
    )
    const wake = await within(4 * SECOND, 'waitForJobs', waiting)
    if (wake.reason === 'delivered') return wake
    assert.ok(attempt < 5, 'no wait was registered in time in 5 attempts')
    await h.store.cancel({ ids: added })
  }
}

export async function enqueueJobs(
  store: Store,
  now: number,
  overrides: readonly Partial<NewJob>[],
): Promise<JobId[]> {
  const results = await store.enqueue({ jobs: overrides.map((o) => newJob(o)), now })
  assert.equal(results.length, overrides.length)
  return results.map((r) => r.id)
}

export async function enqueueJob(store: Store, now: number, overrides: Partial<NewJob> = {}): Promise<JobId> {
  const [id] = await enqueueJobs(store, now, [overrides])
  return id!
}

interface ClaimOptions {
  queues?: readonly string[]
  names?: readonly string[]
  limit?: number
  leaseMs?: number
  workerId?: string
}

/** Claims at `now`; with `expect`, asserts that exactly that job was claimed. */
export async function claimAt(
  store: Store,
  now: number,
  options: ClaimOptions = {},
  expect?: JobId,
): Promise<ClaimedJob[]> {
  const { queues = ['default'], names, limit = 10, leaseMs = LEASE_MS, workerId = 'worker-1' } = options
  const claimed = await store.claim({ queues, names, limit, leaseMs, workerId, now })
  if (expect !== undefined) assert.deepEqual(ids(claimed), [expect])
  return claimed
}

export function renewAt(store: Store, now: number, job: ClaimedJob, leaseMs = LEASE_MS): Promise<string[]> {
  return store.renew({ leases: [{ id: job.id, leaseToken: job.leaseToken }], leaseMs, now })
}

export function completed(job: ClaimedJob | undefined, result: unknown = { done: true }): Settlement {
  assert.ok(job, 'a claimed job to complete')
  return { kind: 'completed', id: job.id, leaseToken: job.leaseToken, result }
}

/** Enqueues a job, claims and settles it at `now`; the job's queue must hold no other ready job. */
export async function finishNew(
  store: Store,
  now: number,
  how: 'completed' | 'dead',
  overrides: Partial<NewJob> = {},
): Promise<JobId> {
  const id = await enqueueJob(store, now, overrides)
  const [job] = await claimAt(store, now, { queues: [overrides.queue ?? 'default'], limit: 1 }, id)
  const settlement: Settlement =
    how === 'completed'
      ? completed(job)
      : {
          kind: 'dead',
          id,
          leaseToken: job!.leaseToken,
          error: { kind: 'error', message: 'failed for good' },
        }
  assert.deepEqual((await store.settle({ settlements: [settlement], now })).settled, ['ok'])
  return id
}

export async function getExisting(store: Store, id: JobId): Promise<Job> {
  const job = await getJob(store, id)
  assert.ok(job, `job ${id} exists`)
  return job
}

/** The documented fields of a job (a store may carry more), with an absent result as null. */
export function view(job: Job): Job {
  return {
    id: job.id,
    queue: job.queue,
    name: job.name,
    payload: job.payload,
    state: job.state,
    priority: job.priority,
    runAt: job.runAt,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    timeoutMs: job.timeoutMs,
    uniqueKey: job.uniqueKey,
    group: job.group,
    expiresAt: job.expiresAt,
    schedule: job.schedule,
    backoff: job.backoff,
    keepForMs: job.keepForMs,
    trace: job.trace,
    lastError: job.lastError,
    result: job.result ?? null,
    progress: job.progress,
    logs: job.logs,
    workerId: job.workerId,
    leaseExpiresAt: job.leaseExpiresAt,
    createdAt: job.createdAt,
    updatedAt: job.updatedAt,
    finishedAt: job.finishedAt,
  }
}

export function ids(jobs: readonly { id: JobId }[]): JobId[] {
  return jobs.map((j) => j.id)
}

export function one<T>(items: readonly T[]): T {
  assert.equal(items.length, 1, `exactly one item (got ${items.length})`)
  return items[0]!
}

export function stat(queue: string, counts: Partial<Omit<QueueStats, 'queue'>>): QueueStats {
  return { ...emptyStats(queue, 60_000), ...counts }
}

/** Every page of a listing, as lists of ids; fails if the cursor never ends. */
export async function allPages(store: Store, params: { queue?: string; limit: number }): Promise<JobId[][]> {
  const pages: JobId[][] = []
  let cursor: string | undefined
  for (let i = 0; i < 100; i++) {
    const page = await store.listJobs({ ...params, ...(cursor === undefined ? {} : { cursor }) })
    pages.push(ids(page.jobs))
    if (page.nextCursor === null) return pages
    cursor = page.nextCursor
  }
  assert.fail('listJobs kept returning a cursor')
}

/** Handle counts once handles closed by earlier tests have left the list (they go a turn or two late). */
export async function settledHandleCounts(): Promise<Map<string, number>> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 1))
  return handleCounts()
}

export function handleCounts(): Map<string, number> {
  const counts = new Map<string, number>()
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1)
  return counts
}
