/**
 * The worker registry and throughput on SQLite (store-workers.ts): a heartbeat's transaction body,
 * and the reads. The rules (checks, what is kept how long) are the kernel's (kernel/workers.ts).
 */
import {
  byHostAndPid,
  EXPIRED_WORKERS_PER_HEARTBEAT,
  OLD_MINUTES_PER_HEARTBEAT,
  THROUGHPUT_KEEP_MS,
  throughputRange,
  toWorkerRecord,
} from '../kernel/workers.js'
import type { HeartbeatParams, ThroughputCount, ThroughputParams, WorkerRecord } from '../store.js'
import type { SqliteConnection } from './sqlite-connection.js'

/**
 * A heartbeat, inside its write transaction at `at`: the worker's record, its counts (merged and
 * ordered, kernel/workers.ts checkHeartbeatParams) added, and a bounded share of the cleaning.
 */
export function heartbeatRows(
  connection: SqliteConnection,
  { worker, ttlMs }: HeartbeatParams,
  counts: readonly ThroughputCount[],
  at: number,
): void {
  const keptFrom = at - THROUGHPUT_KEEP_MS
  connection.statement('workers-put').run({
    worker_id: worker.workerId,
    info: JSON.stringify(worker),
    heartbeat_at: at,
    expires_at: at + ttlMs,
  })
  const add = connection.statement('throughput-add')
  for (const { minute, queue, completed, failed } of counts) {
    if (minute >= keptFrom) add.run({ minute, queue, completed, failed })
  }
  connection.statement('workers-delete-expired').run({ now: at, limit: EXPIRED_WORKERS_PER_HEARTBEAT })
  connection.statement('throughput-delete-old').run({ before: keptFrom, limit: OLD_MINUTES_PER_HEARTBEAT })
}

export function workerRecords(connection: SqliteConnection, now: number): WorkerRecord[] {
  const rows = connection.statement('workers-list').all({ now }) as { info: string; heartbeat_at: number }[]
  return rows.map((row) => toWorkerRecord(row.info, row.heartbeat_at)).sort(byHostAndPid)
}

export function throughputRows(
  connection: SqliteConnection,
  params: ThroughputParams,
  now: number,
): ThroughputCount[] {
  const { from, to } = throughputRange(params, now)
  return connection
    .statement('throughput')
    .all({ from, to, queue: params.queue ?? null }) as ThroughputCount[]
}
