// The admin operations that only read: what `ferry jobs` and `ferry stats` show, and what a
// dashboard's pages (a read-only one included) are built from. Each takes an open store and a
// params object, checks the params before reading anything, and returns plain data: no terminal
// formatting, instants as epoch milliseconds, JSON-serialisable as it is.
import type { Job, JobId } from '../core/job.js'
import { assertInteger } from '../core/validate.js'
import { checkStatsParams, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX } from '../store/params.js'
import type { JobPage, ListJobsParams, QueueControl, QueueStats, StatsParams, Store } from '../store/store.js'
import { assertJobIds } from './job-ids.js'
import { runningQueue } from './queue-control.js'

export { LIST_LIMIT_DEFAULT }

/**
 * The store's listJobs without its page size: `limit` may be any positive integer (default 50),
 * and as many store pages as it takes are read. `nextCursor` is null when no more jobs match, and
 * otherwise goes on where this list stopped, as the store's does. With `ids`, those jobs (one
 * store call, which ignores the limit).
 */
export async function listJobs(store: Store, params: ListJobsParams = {}): Promise<JobPage> {
  // The filters and the cursor are the store's to check, on the first page, before anything is read.
  const { limit = LIST_LIMIT_DEFAULT, cursor: from, ...filters } = params
  assertInteger(limit, 'limit', { min: 1 })
  const jobs: Job[] = []
  let cursor = from ?? null
  do {
    const page = await store.listJobs({
      ...filters,
      limit: Math.min(LIST_LIMIT_MAX, limit - jobs.length),
      ...(cursor === null ? {} : { cursor }),
    })
    jobs.push(...page.jobs)
    cursor = page.nextCursor
  } while (cursor !== null && jobs.length < limit)
  return { jobs, nextCursor: cursor }
}

export interface GetJobParams {
  id: JobId
}

/** One job with every field (its last error, its result, its lease), or null when none has that id. */
export async function getJob(store: Store, { id }: GetJobParams): Promise<Job | null> {
  assertJobIds([id], 'id')
  const [job] = (await store.listJobs({ ids: [id] })).jobs
  return job ?? null
}

/** The throughput window: one minute, so the recent counts read directly as a per-minute rate. */
export const RECENT_WINDOW_MS = 60_000

/** What getStats counts per queue, in the order tables show them. */
export const JOB_COUNT_KEYS = [
  'ready',
  'scheduled',
  'active',
  'completed',
  'dead',
  'expired',
  'recentCompletedCount',
  'recentDeadCount',
] as const

/** The jobs in each state (QueueStats in docs/admin.md), and those finished within the window. */
export type JobCounts = Record<(typeof JOB_COUNT_KEYS)[number], number>

export interface QueueCounts extends JobCounts {
  queue: string
}

/** A queue's counts and its pause and limits (its retention is `ferry retention`'s). */
export interface QueueReport extends QueueCounts, Omit<QueueControl, 'queue' | 'retention'> {
  /** When the oldest ready job became ready (its latency is now minus this); null when none is. */
  oldestReadyAt: number | null
}

export interface StatsReport {
  /** When the jobs were counted (epoch ms): the recent window ends here. */
  at: number
  recentWindowMs: number
  /** One entry per queue that holds any job or has a setting, sorted by name; [] for an empty store. */
  queues: QueueReport[]
  /** Every queue's counts added up. */
  totals: JobCounts
}

/** Jobs per queue and state, their totals, and how many completed or died within the window. */
export async function getStats(store: Store, params: StatsParams = {}): Promise<StatsReport> {
  checkStatsParams(params)
  const { now = Date.now(), recentWindowMs = RECENT_WINDOW_MS } = params
  const [stats, { queues: controls }] = await Promise.all([
    store.stats({ now, recentWindowMs }),
    store.control(),
  ])
  const counted = new Map(stats.map((queueStats) => [queueStats.queue, queueStats]))
  const controlled = new Map(controls.map((control) => [control.queue, control]))
  const names = [...new Set([...counted.keys(), ...controlled.keys()])].sort()
  return {
    at: now,
    recentWindowMs,
    queues: names.map((queue) => ({
      queue,
      ...(counted.has(queue) ? countsOf(counted.get(queue)!) : zeroCounts()),
      oldestReadyAt: counted.get(queue)?.oldestReadyAt ?? null,
      paused: controlled.get(queue)?.paused ?? null,
      limits: controlled.get(queue)?.limits ?? runningQueue(queue).limits,
    })),
    totals: sumCounts(stats),
  }
}

function zeroCounts(): JobCounts {
  return Object.fromEntries(JOB_COUNT_KEYS.map((key) => [key, 0])) as JobCounts
}

function countsOf(stats: QueueStats): JobCounts {
  return Object.fromEntries(JOB_COUNT_KEYS.map((key) => [key, stats[key]])) as JobCounts
}

function sumCounts(queues: readonly QueueStats[]): JobCounts {
  const totals = zeroCounts()
  for (const stats of queues) for (const key of JOB_COUNT_KEYS) totals[key] += stats[key]
  return totals
}
