/**
 * Rows of ferry_jobs (migrations/0001_init.sql) as the store reads them, and the Jobs they stand
 * for: ids are integers in the table and strings in Ferry, payloads, results and errors JSON text.
 */
import type { ClaimedJob, Job, JobError, JobState } from '../../core/job.js'
import { toClaimedJob } from '../kernel/jobs.js'

export interface JobRow {
  id: number
  queue: string
  name: string
  payload: string
  state: JobState
  priority: number
  run_at: number
  attempts: number
  max_attempts: number
  timeout_ms: number | null
  unique_key: string | null
  lease_token: string | null
  lease_expires_at: number | null
  worker_id: string | null
  last_error: string | null
  result: string | null
  created_at: number
  updated_at: number
  finished_at: number | null
}

export function toJob(row: JobRow): Job {
  return {
    id: String(row.id),
    queue: row.queue,
    name: row.name,
    payload: JSON.parse(row.payload) as unknown,
    state: row.state,
    priority: row.priority,
    runAt: row.run_at,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    timeoutMs: row.timeout_ms,
    uniqueKey: row.unique_key,
    lastError: row.last_error === null ? null : (JSON.parse(row.last_error) as JobError),
    result: row.result === null ? null : (JSON.parse(row.result) as unknown),
    workerId: row.worker_id,
    leaseExpiresAt: row.lease_expires_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
  }
}

/** A row the claim leased: it carries its lease token. */
export function toClaimedRow(row: JobRow): ClaimedJob {
  return toClaimedJob(toJob(row), row.lease_token!)
}
