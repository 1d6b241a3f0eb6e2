// The admin operations on the worker registry and throughput (Store.heartbeat keeps them): who is
// running, and the jobs settled per minute, as `ferry workers` and a dashboard show them. Plain
// data, instants as epoch milliseconds, JSON-serialisable as it is.
import {
  checkThroughputParams,
  checkWorkersParams,
  MINUTE_MS,
  THROUGHPUT_KEEP_MS,
} from '../store/kernel/workers.js'
import type { Store, ThroughputCount, WorkerRecord, WorkersParams } from '../store/store.js'

export interface WorkersReport {
  /** When the workers were read (epoch ms): a heartbeat's age is at - heartbeatAt. */
  at: number
  /** The running workers (their record not expired), by host, then pid. */
  workers: WorkerRecord[]
}

/** The running workers: what each said of itself at its last heartbeat, and when that was. */
export async function listWorkers(store: Store, params: WorkersParams = {}): Promise<WorkersReport> {
  checkWorkersParams(params)
  const at = params.now ?? Date.now()
  return { at, workers: await store.workers({ now: at }) }
}

export interface GetThroughputParams {
  /** Epoch ms: from this minute (inclusive)... */
  since: number
  /** ...to this one (exclusive); default now. At most a day after since, as the store keeps. */
  until?: number
  /** Only this queue; default every queue. */
  queue?: string
}

/** One minute of every queue (or the one asked for) added up: a point of a chart. */
export interface ThroughputMinute {
  minute: number
  completed: number
  failed: number
}

export interface ThroughputReport {
  /** The range read, [since, until), in epoch ms. */
  since: number
  until: number
  queue: string | null
  /** Each minute and queue with counts, oldest first, then by queue. */
  counts: ThroughputCount[]
  /**
   * Every minute of the range the store keeps (at most the last day), oldest first, with the
   * counts of its queues added up, and zeros for a minute without any: ready to chart.
   */
  minutes: ThroughputMinute[]
}

/** Jobs completed, and attempts failed, per minute and queue: counters the workers keep, not a scan of jobs. */
export async function getThroughput(store: Store, params: GetThroughputParams): Promise<ThroughputReport> {
  checkThroughputParams(params)
  const { since, queue } = params
  // Without an until the store reads up to its own clock, and cuts a since older than a day.
  const counts = await store.throughput(params)
  const until = params.until ?? Math.max(Date.now(), since)
  const byMinute = new Map<number, ThroughputMinute>()
  const first = Math.ceil(Math.max(since, until - THROUGHPUT_KEEP_MS) / MINUTE_MS) * MINUTE_MS
  for (let minute = first; minute < until; minute += MINUTE_MS) {
    byMinute.set(minute, { minute, completed: 0, failed: 0 })
  }
  for (const count of counts) {
    const point = byMinute.get(count.minute)
    if (point === undefined) continue
    point.completed += count.completed
    point.failed += count.failed
  }
  return { since, until, queue: queue ?? null, counts, minutes: [...byMinute.values()] }
}
