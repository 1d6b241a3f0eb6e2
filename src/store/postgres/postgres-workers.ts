/**
 * The worker registry and throughput on PostgreSQL (store-workers.ts): a heartbeat is one
 * statement (sql/heartbeat.sql), each read another. The rules (checks, what is kept how long) are
 * the kernel's (kernel/workers.ts).
 */
import {
  byHostAndPid,
  EXPIRED_WORKERS_PER_HEARTBEAT,
  OLD_MINUTES_PER_HEARTBEAT,
  THROUGHPUT_KEEP_MS,
  toWorkerRecord,
} from '../kernel/workers.js'
import type { HeartbeatParams, ThroughputCount, ThroughputParams, WorkerRecord } from '../store.js'
import type { PostgresPool, SqlName } from './postgres-pool.js'

/** `counts` are the params' counts as checkHeartbeatParams merged and ordered them. */
export async function heartbeat(
  db: PostgresPool,
  texts: Record<SqlName, string>,
  { worker, ttlMs, now }: HeartbeatParams,
  counts: readonly ThroughputCount[],
): Promise<void> {
  await db.query(
    texts.heartbeat,
    [
      worker.workerId,
      JSON.stringify(worker),
      ttlMs,
      now ?? null,
      counts.map((count) => count.minute),
      counts.map((count) => count.queue),
      counts.map((count) => count.completed),
      counts.map((count) => count.failed),
      THROUGHPUT_KEEP_MS,
      EXPIRED_WORKERS_PER_HEARTBEAT,
      OLD_MINUTES_PER_HEARTBEAT,
    ],
    'heartbeat',
  )
}

export async function readWorkers(
  db: PostgresPool,
  texts: Record<SqlName, string>,
  now: number | undefined,
): Promise<WorkerRecord[]> {
  const rows = await db.query<{ info: string; heartbeat_at: string }>(texts.workers, [now ?? null])
  return rows.map((row) => toWorkerRecord(row.info, Number(row.heartbeat_at))).sort(byHostAndPid)
}

export async function readThroughput(
  db: PostgresPool,
  texts: Record<SqlName, string>,
  { since, until, queue, now }: ThroughputParams,
): Promise<ThroughputCount[]> {
  const rows = await db.query<Record<keyof ThroughputCount, string>>(texts.throughput, [
    since,
    until ?? null,
    queue ?? null,
    now ?? null,
    THROUGHPUT_KEEP_MS,
  ])
  return rows.map((row) => ({
    minute: Number(row.minute),
    queue: row.queue,
    completed: Number(row.completed),
    failed: Number(row.failed),
  }))
}
