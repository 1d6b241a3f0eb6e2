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
 * A sweep's batches take at most this share of its time: it pauses 19 times as long as a batch
 * took. With 1,000,000 finished jobs to delete on SQLite (whose calls block the event loop, and
 * whose deletes grow the WAL the workers' commits sync), a no-op worker in the same process ran
 * 15,873/s and 14,597/s in two runs at a twentieth, against 16,170/s and 16,635/s without a sweep
 * (the runs' ranges overlap), and 13,480/s against 16,142/s at a tenth (they did not); the sweep
 * still deleted about 14,000 jobs a second (bench retention, medians of 3, 2026-12-07). Deleting
 * a backlog a little later costs nothing.
 */
const SWEEP_SHARE = 0.05

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
