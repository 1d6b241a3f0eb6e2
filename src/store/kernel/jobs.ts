/**
 * Jobs as every backend hands them out, from here: a claimed job is the job with the token of its
 * claim, which every later write about it must present. The SQL stores read their jobs table into
 * the same row shape (sqlite/migrations/0001_init.sql, postgres/migrations/0001_init.sql): ids and
 * times are integers in SQLite and bigints in PostgreSQL, which pg returns as text; payloads,
 * results and errors are JSON text in both.
 */
import type { ClaimedJob, Job, JobError, JobState, NewJob } from '../../core/job.js'
import { readMeta } from './job-meta.js'
import { readReports } from './job-reports.js'

/** Int64: how a bigint column reads, a number from SQLite (JobRow<number>), decimal text from pg (JobRow<string>). */
export interface JobRow<Int64 extends number | string = number | string> {
  id: Int64
  queue: string
  name: string
  payload: string
  state: JobState
  priority: number
  run_at: Int64
  attempts: number
  max_attempts: number
  timeout_ms: number | null
  unique_key: string | null
  group_key: string | null
  expires_at: Int64 | null
  lease_token: string | null
  lease_expires_at: Int64 | null
  worker_id: string | null
  last_error: string | null
  result: string | null
  /** JSON text of what a job carries that no store query reads (kernel/job-meta.ts); null for none. */
  meta: string | null
  /** JSON text of the latest progress, and a JSON array of the kept log lines (migrations 0012 / 0018); null for none. */
  progress?: string | null
  logs?: string | null
  created_at: Int64
  updated_at: Int64
  finished_at: Int64 | null
}

export function toJob(row: JobRow): Job {
  return {
    id: String(row.id),
    queue: row.queue,
    name: row.name,
    payload: JSON.parse(row.payload) as unknown,
    state: row.state,
    priority: row.priority,
    runAt: Number(row.run_at),
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    timeoutMs: row.timeout_ms,
    uniqueKey: row.unique_key,
    group: row.group_key ?? null,
    expiresAt: row.expires_at == null ? null : Number(row.expires_at),
    ...readMeta(row.meta ?? null),
    lastError: row.last_error === null ? null : (JSON.parse(row.last_error) as JobError),
    result: row.result === null ? null : (JSON.parse(row.result) as unknown),
    ...readReports(row.progress, row.logs),
    workerId: row.worker_id,
    leaseExpiresAt: row.lease_expires_at === null ? null : Number(row.lease_expires_at),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
  }
}

/** A row a claim leased: it carries its lease token. */
export function toClaimedRow(row: JobRow): ClaimedJob {
  return toClaimedJob(toJob(row), row.lease_token!)
}

export function toClaimedJob(job: Job, leaseToken: string): ClaimedJob {
  const claimed = job as ClaimedJob
  claimed.leaseToken = leaseToken
  return claimed
}

/** A new job's start deadline as the store keeps it: its instant, or `expiresInMs` from `at`; null for none. */
export function deadlineOf(job: NewJob, at: number): number | null {
  return job.expiresAt ?? (job.expiresInMs === null ? null : at + job.expiresInMs)
}

/** The last error of a job that was not started by its start deadline (its expiresAt says when). */
export const EXPIRED_ERROR: JobError = {
  kind: 'expired',
  message: 'its start deadline (expiresAt) passed before it could start',
}
