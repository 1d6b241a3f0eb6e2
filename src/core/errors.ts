/**
 * Every error Ferry throws is a FerryError with a stable `code`, so callers can branch on the code
 * rather than on message text. Driver errors are kept as `cause`.
 */
import type { JobError } from './job.js'

export type FerryErrorCode =
  | ValidationErrorCode
  | 'job_not_found'
  | 'job_not_changeable'
  | 'schedule_not_found'
  | 'job_locked'
  | 'store_closed'
  | 'store_unavailable'
  | 'migration_required'
  | 'schema_too_new'
  | 'missing_peer_dependency'
  | JobWaitErrorCode

export class FerryError extends Error {
  readonly code: FerryErrorCode

  constructor(code: FerryErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    this.name = new.target.name
  }
}

export type ValidationErrorCode =
  | 'invalid_queue'
  | 'invalid_name'
  | 'invalid_payload'
  | 'payload_too_large'
  | 'invalid_priority'
  | 'invalid_delay'
  | 'invalid_run_at'
  | 'invalid_max_attempts'
  | 'invalid_timeout'
  | 'invalid_unique_key'
  | 'invalid_option'

/** Bad input. `field` is the path of the offending value, e.g. `jobs[3].priority` or `payload.user.born`. */
export class ValidationError extends FerryError {
  declare readonly code: ValidationErrorCode
  readonly field: string

  constructor(code: ValidationErrorCode, field: string, message: string) {
    super(code, `${field}: ${message}`)
    this.field = field
  }
}

export class JobNotFoundError extends FerryError {
  readonly jobId: string

  constructor(jobId: string) {
    super('job_not_found', `job ${jobId} does not exist`)
    this.jobId = jobId
  }
}

/**
 * A job that has started (a worker holds it: active) or finished (completed, dead) cannot be
 * changed: only one still in line (scheduled or ready) can. Nothing was written.
 */
export class JobNotChangeableError extends FerryError {
  readonly jobId: string
  /** The job's state when the change was refused. */
  readonly state: string

  constructor(jobId: string, state: string) {
    const why =
      state === 'active'
        ? 'a worker is running it; cancel it, or change the job once it is back in line'
        : 'it has finished; `ferry retry` runs a dead job again'
    super(
      'job_not_changeable',
      `job ${jobId} is ${state}: only a job that has not started (scheduled or ready) can be changed (${why})`,
    )
    this.jobId = jobId
    this.state = state
  }
}

export class ScheduleNotFoundError extends FerryError {
  readonly scheduleId: string

  constructor(scheduleId: string) {
    super('schedule_not_found', `schedule ${scheduleId} does not exist (\`ferry schedules list\` shows them)`)
    this.scheduleId = scheduleId
  }
}

/**
 * A worker could not write about one of its jobs because something outside Ferry holds the job's
 * record locked (a PostgreSQL session with its row FOR UPDATE): reported as a worker error, and
 * written again once the lock is gone. Only that job waits.
 */
export class JobLockedError extends FerryError {
  readonly jobId: string

  constructor(jobId: string, what: string) {
    super(
      'job_locked',
      `job ${jobId}: its row is locked by another session, so its ${what} waits until the lock is released`,
    )
    this.jobId = jobId
  }
}

export class StoreUnavailableError extends FerryError {
  /**
   * False when trying again cannot help because the store's data is gone from under this process
   * (its SQLite file was deleted or replaced, its Redis namespace was emptied): a worker stops on
   * such an error instead of retrying it.
   */
  readonly retryable: boolean

  constructor(message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super('store_unavailable', message, options)
    this.retryable = options?.retryable ?? true
  }
}

/** Whether an error says the store is gone for good (StoreUnavailableError with retryable false). */
export function isStoreLost(error: unknown): error is StoreUnavailableError {
  return error instanceof StoreUnavailableError && !error.retryable
}

export class StoreClosedError extends FerryError {
  constructor(operation: string) {
    super('store_closed', `the store is closed (${operation})`)
  }
}

/** The store's schema is older than this version of Ferry expects, and migrating was not allowed. */
export class MigrationRequiredError extends FerryError {
  constructor(message: string) {
    super('migration_required', message)
  }
}

/** The store was migrated by a newer Ferry: this version must not write to it. */
export class SchemaTooNewError extends FerryError {
  constructor(message: string) {
    super('schema_too_new', message)
  }
}

/**
 * A feature was asked for whose optional peer package is not installed (prom-client for metrics,
 * @opentelemetry/api for tracing): Ferry loads such a package only when its feature is used, so
 * users who want neither install neither.
 */
export class MissingPeerDependencyError extends FerryError {
  /** The npm package to install, e.g. 'prom-client'. */
  readonly packageName: string

  constructor(packageName: string, feature: string, options?: { cause?: unknown }) {
    super(
      'missing_peer_dependency',
      `${feature} needs the package ${packageName}, which is not installed: npm install ${packageName}, or leave ${feature} off`,
      options,
    )
    this.packageName = packageName
  }
}

/**
 * Why a wait for a job's result (Client.waitFor, enqueueAndWait) ended without one:
 * - `job_dead`: the job ended dead, its attempts spent or failed for good (`jobError` says why)
 * - `job_cancelled`: an operator cancelled it
 * - `job_expired`: it was not started by its start deadline
 * - `job_removed`: no job has the id (purged, pruned by retention, or never there)
 * - `wait_timeout`: timeoutMs passed first
 * - `wait_aborted`: the signal aborted first
 */
export type JobWaitErrorCode =
  'job_dead' | 'job_cancelled' | 'job_expired' | 'job_removed' | 'wait_timeout' | 'wait_aborted'

export class JobWaitError extends FerryError {
  declare readonly code: JobWaitErrorCode
  readonly jobId: string
  /** The job's last error, when it ended dead, cancelled or expired; else null. */
  readonly jobError: JobError | null

  constructor(code: JobWaitErrorCode, jobId: string, message: string, jobError: JobError | null = null) {
    super(code, `job ${jobId}: ${message}`)
    this.jobId = jobId
    this.jobError = jobError
  }
}
