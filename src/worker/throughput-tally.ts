import { MINUTE_MS, THROUGHPUT_KEEP_MS } from '../store/kernel/workers.js'
import type { ThroughputCount } from '../store/store.js'

/**
 * What a worker settled per minute and queue since its last heartbeat (WorkerHeartbeat writes
 * it): counted in memory as outcomes are written, so that throughput costs the hot path no store
 * call. A count is a job completed, or an attempt that failed (retried or dead); a job snoozed,
 * cancelled or expired is not the worker's throughput.
 */
export class ThroughputTally {
  private readonly counts = new Map<string, ThroughputCount>()

  /** An outcome the store took, counted in the minute of `at` (epoch ms; this host's clock). */
  add(queue: string, outcome: 'completed' | 'failed', at = Date.now()): void {
    const minute = at - (at % MINUTE_MS)
    this.countOf(minute, queue)[outcome]++
  }

  /** Every count so far, which the tally forgets: the heartbeat sends them. */
  take(): ThroughputCount[] {
    const counts = [...this.counts.values()]
    this.counts.clear()
    return counts
  }

  /**
   * Counts taken whose heartbeat failed, kept for the next one; minutes the store would no longer
   * keep are dropped, so a worker cut off from its store holds at most a day of them.
   */
  putBack(counts: readonly ThroughputCount[], now = Date.now()): void {
    for (const { minute, queue, completed, failed } of counts) {
      if (minute < now - THROUGHPUT_KEEP_MS) continue
      const count = this.countOf(minute, queue)
      count.completed += completed
      count.failed += failed
    }
  }

  private countOf(minute: number, queue: string): ThroughputCount {
    const key = `${minute} ${queue}`
    let count = this.counts.get(key)
    if (count === undefined) {
      count = { minute, queue, completed: 0, failed: 0 }
      this.counts.set(key, count)
    }
    return count
  }
}
