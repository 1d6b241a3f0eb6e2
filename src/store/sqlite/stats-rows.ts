/**
 * stats() on SQLite: the counts kept per queue and state (migrations/0014_job_counts.sql, read by
 * sql/stats-counts.sql), with the scheduled jobs already due moved to ready (sql/stats-due.sql) and
 * each queue's oldest ready run time found by skips over the ready indexes
 * (sql/stats-oldest-ready.sql), in one read transaction, so they agree with each other. No query
 * reads every job: what it costs grows with the queues, the due jobs and the names, groups and
 * priorities with ready jobs, where a count of the table took 450-650 ms at 1,000,000 jobs,
 * holding the event loop (better-sqlite3 is synchronous). The recent counts are a range of
 * ferry_jobs_finished, the size of the window (sql/stats-recent.sql).
 */
import type { JobState } from '../../core/job.js'
import { foldStats, statsCountOf, type StatsCount } from '../kernel/stats.js'
import type { QueueStats } from '../store.js'
import type { SqliteConnection } from './sqlite-connection.js'

type CountRow = { queue: string; state: JobState; count: number }

export function statsRows(connection: SqliteConnection, at: number, recentWindowMs: number): QueueStats[] {
  const [counts, due, oldest, recent] = connection.read(() => [
    connection.statement('stats-counts').all() as {
      queue: string
      state: JobState | 'expired'
      count: number
    }[],
    connection.statement('stats-due').all({ now: at }) as { queue: string; count: number; oldest: number }[],
    connection.statement('stats-oldest-ready').all() as { queue: string; oldest: number }[],
    connection.statement('stats-recent').all({ since: at - recentWindowMs }) as CountRow[],
  ])
  const rows: StatsCount[] = counts.map(({ queue, state, count }) => ({
    queue,
    of: state === 'expired' ? statsCountOf('expired', 'dead') : statsCountOf('count', state),
    count,
  }))
  // Due scheduled jobs count as ready (a claim would make them so), and so does their run time.
  for (const { queue, count, oldest: oldestAt } of due) {
    rows.push({ queue, of: 'scheduled', count: -count }, { queue, of: 'ready', count, oldestAt })
  }
  for (const { queue, oldest: oldestAt } of oldest) rows.push({ queue, of: 'ready', count: 0, oldestAt })
  for (const { queue, state, count } of recent) rows.push({ queue, of: statsCountOf('recent', state), count })
  return foldStats(rows, recentWindowMs)
}
