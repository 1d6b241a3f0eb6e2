/**
 * How many jobs a worker claims ahead of its free slots. A held job starts the moment a slot frees,
 * without a store round trip, and the worker runs jobs while the store writes the last outcomes:
 * for short jobs that is most of the throughput (20,000 no-op jobs at concurrency 10 ran 1.4-1.9×
 * faster with 10 held, bench/RESULTS.md). But a held job is leased to this worker, so no other
 * worker can start it while it waits here behind long ones.
 *
 * 'auto' (the default) holds jobs only while they would start soon: with `concurrency` slots each
 * taking `meanRunMs` per job, a slot frees about every meanRunMs / concurrency, so the k-th held
 * job waits about k × meanRunMs / concurrency. It holds as many as start within
 * AUTO_HORIZON_MS that way, at most AUTO_MOST_AHEAD or one per slot, whichever is more, and none
 * until a job has run (nothing is known yet) or while no slot has freed for that long (every slot
 * is busy with something slow now, whatever the mean says).
 */
import { monotonicMs } from '../core/monotonic.js'

/** What the user asked for: a fixed number of jobs, or 'auto'. */
export type PrefetchSetting = number | 'auto'

/** A held job is expected to start within this long; longer, and it is better left in the store. */
export const AUTO_HORIZON_MS = 20
/**
 * 'auto' holds at most this many, or one per slot when there are more slots. One per slot alone
 * left a worker of one slot a store round trip for every two short jobs: 2,000 no-op jobs on
 * PostgreSQL at concurrency 1 ran at 525-534 jobs/s holding one ahead and 1,528-2,214/s holding
 * ten (a probe counting the store's calls, 2026-12-07; 997 settle-and-claim calls against 181).
 */
export const AUTO_MOST_AHEAD = 10
/** Weight of the newest run in the mean: about the last ten runs count. */
const MEAN_WEIGHT = 0.1

/**
 * The most jobs a worker holds leases on at once: running, held ahead and with their outcome on its
 * way. A worker that dies runs again at most this many jobs it had started.
 */
export function mostLeasedJobs(concurrency: number, prefetch: PrefetchSetting): number {
  return concurrency + mostJobsAhead(prefetch, concurrency)
}

/** The most jobs a setting holds ahead. */
function mostJobsAhead(prefetch: PrefetchSetting, concurrency: number): number {
  return prefetch === 'auto' ? Math.max(concurrency, AUTO_MOST_AHEAD) : prefetch
}

export class Prefetch {
  private meanRunMs: number | null = null
  private lastEndAt = -Infinity

  constructor(
    readonly setting: PrefetchSetting,
    private readonly concurrency: number,
  ) {}

  /** Jobs to hold ahead now, beyond the free slots. */
  jobsAhead(now = monotonicMs()): number {
    if (this.setting !== 'auto') return this.setting
    if (this.meanRunMs === null || now - this.lastEndAt > AUTO_HORIZON_MS) return 0
    const startingSoon = Math.floor((AUTO_HORIZON_MS * this.concurrency) / Math.max(this.meanRunMs, 0.001))
    return Math.min(mostJobsAhead(this.setting, this.concurrency), startingSoon)
  }

  /** A job's handler ran for `ms` and has just ended. */
  jobRan(ms: number, now = monotonicMs()): void {
    this.lastEndAt = now
    this.meanRunMs = this.meanRunMs === null ? ms : this.meanRunMs + MEAN_WEIGHT * (ms - this.meanRunMs)
  }
}
