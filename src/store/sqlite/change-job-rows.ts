/**
 * The changeJobs() transaction body (sqlite-store.ts runs it in one write transaction, and the
 * wake-ups after its commit): the checks and the state rule are the kernel's
 * (kernel/change-jobs.ts); what is SQLite's here is the statement per job.
 */
import type { ChangeJobResult } from '../store.js'
import { stateAfterChange, type CheckedChange } from '../kernel/change-jobs.js'
import type { SqliteConnection } from './sqlite-connection.js'

export interface ChangedRows {
  /** One per change, in input order. */
  results: ChangeJobResult[]
  /** Queues where a change made a job ready now. */
  readyQueues: Set<string>
  /** The earliest run time a change gave a job that now waits, null for none. */
  earliestScheduled: number | null
}

export function changeJobRows(
  connection: SqliteConnection,
  changes: readonly CheckedChange[],
  at: number,
): ChangedRows {
  const change = connection.statement('change-jobs').pluck()
  // The job's row, read only when the change was refused, to tell an unknown id from a started job.
  const getJob = connection.statement('list-jobs-ids')
  const readyQueues = new Set<string>()
  let earliestScheduled: number | null = null
  const results = changes.map(({ id, priority, runAt, payload, maxAttempts }): ChangeJobResult => {
    if (id === null) return 'not_found'
    const state = runAt === null ? null : stateAfterChange(runAt, at)
    const queue = change.get({
      id,
      priority,
      run_at: runAt,
      state,
      payload,
      max_attempts: maxAttempts,
      now: at,
    }) as string | undefined
    if (queue === undefined) return getJob.get({ id }) === undefined ? 'not_found' : 'not_changeable'
    if (state === 'ready') readyQueues.add(queue)
    else if (state === 'scheduled' && (earliestScheduled === null || runAt! < earliestScheduled)) {
      earliestScheduled = runAt
    }
    return 'ok'
  })
  return { results, readyQueues, earliestScheduled }
}
