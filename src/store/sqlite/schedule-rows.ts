/**
 * The transaction bodies of schedules() and fireSchedule() (sqlite-store.ts runs each in one
 * write transaction, and the wake-ups after its commit): the rules of a change and of a fire are
 * the kernel's (kernel/schedules.ts); what is SQLite's here is reading and writing the rows.
 */
import type { FireScheduleParams, FireScheduleResult, SchedulesParams } from '../store.js'
import {
  fireMayProceed,
  scheduleChanges,
  scheduleRowAfter,
  toSchedule,
  UNFINISHED_STATES,
  type ScheduleRow,
} from '../kernel/schedules.js'
import { enqueueRows, type EnqueuedRows } from './enqueue-rows.js'
import type { SqliteConnection } from './sqlite-connection.js'

/** Applies a schedules() call's changes; whether any changed a row (and so moved the version). */
export function changeScheduleRows(
  connection: SqliteConnection,
  params: SchedulesParams,
  at: number,
): boolean {
  let changed = false
  for (const { id, change } of scheduleChanges(params)) {
    const current = scheduleRow(connection, id)
    const row = scheduleRowAfter(change, current, at)
    if (row === current) continue
    changed = true
    if (row === null) connection.statement('schedule-delete').run({ id })
    else connection.statement('schedule-put').run(row)
  }
  if (changed) connection.statement('schedules-version-bump').run()
  return changed
}

/**
 * A fire: its outcome when it enqueued nothing, else what the enqueue wrote (the store wakes the
 * waiters of its jobs after the commit).
 */
export function fireScheduleRows(
  connection: SqliteConnection,
  params: FireScheduleParams,
  at: number,
): Exclude<FireScheduleResult, { outcome: 'fired' }> | EnqueuedRows {
  const { id, toSlot, jobs } = params
  const row = scheduleRow(connection, id)
  if (!fireMayProceed(row, params)) {
    return { outcome: 'stale', schedule: row === null ? null : toSchedule(row) }
  }
  const fire = connection.statement('schedule-fire')
  if (row.overlap === 'skip' && row.last_job_id !== null) {
    const state = connection.statement('schedule-last-job-state').pluck().get({ id: row.last_job_id })
    if (UNFINISHED_STATES.includes(state as (typeof UNFINISHED_STATES)[number])) {
      fire.run({ id, to_slot: toSlot, last_job_id: null })
      return { outcome: 'overlap' }
    }
  }
  const enqueued = enqueueRows(connection, jobs, at)
  fire.run({ id, to_slot: toSlot, last_job_id: enqueued.results.at(-1)?.id ?? null })
  return enqueued
}

function scheduleRow(connection: SqliteConnection, id: string): ScheduleRow | null {
  return (connection.statement('schedule-get').get({ id }) as ScheduleRow | undefined) ?? null
}
