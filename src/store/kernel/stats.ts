/**
 * Stats, as every backend's stats() gets them from here: the counts its query or script returned,
 * folded into one QueueStats per queue, sorted by queue name.
 */
import type { JobState } from '../../core/job.js'
import type { QueueStats } from '../store.js'

/** What one count is of: jobs in a state, or jobs that finished within the recent window. */
export type StatsCount = {
  queue: string
  of: JobState | 'expired' | 'recentCompleted' | 'recentDead'
  count: number
  /** With a count of ready jobs: the runAt of the oldest of them (null or absent: not known here). */
  oldestAt?: number | null
}

/**
 * What a counted row is of, by its kind (a state's count, a count within the recent window, the
 * expired jobs) and its state: the SQL stores' stats rows name them so.
 */
export function statsCountOf(kind: 'count' | 'recent' | 'expired', state: JobState): StatsCount['of'] {
  if (kind === 'count') return state
  if (kind === 'expired') return 'expired'
  return state === 'completed' ? 'recentCompleted' : 'recentDead'
}

export function foldStats(counts: Iterable<StatsCount>, recentWindowMs: number): QueueStats[] {
  const byQueue = new Map<string, QueueStats>()
  for (const { queue, of, count, oldestAt } of counts) {
    let stats = byQueue.get(queue)
    if (stats === undefined) {
      stats = emptyStats(queue, recentWindowMs)
      byQueue.set(queue, stats)
    }
    if (of === 'recentCompleted') stats.recentCompletedCount += count
    else if (of === 'recentDead') stats.recentDeadCount += count
    else stats[of] += count
    if (of === 'ready' && oldestAt !== undefined && oldestAt !== null)
      stats.oldestReadyAt = stats.oldestReadyAt === null ? oldestAt : Math.min(stats.oldestReadyAt, oldestAt)
  }
  return [...byQueue.values()].sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0))
}

/** A queue's stats before any count is added. */
export function emptyStats(queue: string, recentWindowMs: number): QueueStats {
  return {
    queue,
    ready: 0,
    scheduled: 0,
    active: 0,
    completed: 0,
    dead: 0,
    oldestReadyAt: null,
    expired: 0,
    recentCompletedCount: 0,
    recentDeadCount: 0,
    recentWindowMs,
  }
}
