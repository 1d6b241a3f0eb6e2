import { monotonicMs } from '../core/monotonic.js'
import type { Store } from '../store/store.js'
import { jittered, PeriodicSweep } from './periodic-sweep.js'

export interface RetentionSweeperOptions {
  store: Store
  /** About how long between two sweeps (each is jittered). */
  intervalMs: number
  onDone: (result: RetentionSweep) => void
  onError: (error: unknown) => void
}

/** What one sweep did: the jobs it deleted, in how many batches. */
export interface RetentionSweep {
  deleted: number
  batches: number
}

/**
 * Jobs one prune call deletes: one short transaction (SQLite, PostgreSQL) or script (Redis), so a
 * claim waits for at most one batch. bench/scenarios/retention.ts measures what it costs claims.
 */
const BATCH = 1000
/** The least pause between two batches of a sweep. */
const MIN_PAUSE_MS = 10
/**
 * A sweep's batches take at most this share of its time: it pauses 9 times as long as a batch
 * took. Half (a pause as long as the batch) cost a no-op worker in the same process 40 % of its
 * jobs per second while it swept 50,000 finished jobs on SQLite, whose calls block the event loop;
 * deleting a backlog a little later costs nothing. It still deletes about 10,000 jobs a second,
 * more than one SQLite worker finishes.
 */
const SWEEP_SHARE = 0.1

/**
 * Deletes finished jobs past their retention (Store.prune), in every worker: a sweep at a random
 * point of the first interval, then one about every interval, so workers started together do not
 * sweep together. A sweep repeats prune while it says there is more, and between two batches it
 * pauses so that its batches take at most SWEEP_SHARE of its time: SQLite's writers wait for the
 * lock by sleeping, so back-to-back batches would starve the claims of every process, and a large
 * backlog (a million jobs past their time after retention was lowered) would hold every store busy
 * at once. The
 * sweep is idempotent, so several workers sweeping at once do no harm: each batch deletes what is
 * still there. An error is reported (onError) and the next sweep tries again.
 */
export class RetentionSweeper extends PeriodicSweep<RetentionSweep> {
  constructor(private readonly options: RetentionSweeperOptions) {
    super(options.onError)
  }

  start(): void {
    this.stopped = false
    this.schedule(Math.random() * this.options.intervalMs, () => jittered(this.options.intervalMs))
  }

  protected async sweep(): Promise<RetentionSweep> {
    const result: RetentionSweep = { deleted: 0, batches: 0 }
    for (;;) {
      const startedAt = monotonicMs()
      const { deleted, more } = await this.options.store.prune({ limit: BATCH })
      result.deleted += deleted
      result.batches++
      if (!more || this.stopped) break
      const tookMs = monotonicMs() - startedAt
      await this.wait(Math.max(MIN_PAUSE_MS, (tookMs * (1 - SWEEP_SHARE)) / SWEEP_SHARE))
    }
    this.options.onDone(result)
    return result
  }
}
