/**
 * Schedules on PostgreSQL (Store.schedules, Store.fireSchedule): one row each in the `schedules`
 * table (migration 0015), the store's schedules version in the control table's row 'schedules'.
 * What a change does to a row, and what a fire may do with one, is the kernel's
 * (kernel/schedules.ts); here is how each call is made one atomic step.
 */
import { newLeaseTokenBase } from '../kernel/lease-tokens.js'
import {
  SCHEDULE_COLUMNS,
  scheduleChanges,
  scheduleRowAfter,
  toSchedule,
  UNFINISHED_STATES,
  type ScheduleRow,
} from '../kernel/schedules.js'
import type { FireScheduleParams, FireScheduleResult, SchedulesParams, SchedulesResult } from '../store.js'
import { binaryEnqueueArrays } from './postgres-enqueue-arrays.js'
import type { PostgresPool, SqlName } from './postgres-pool.js'

/** A schedule's columns as a statement returns them, all NULL in the row that stands for none. */
type MaybeScheduleRow = ScheduleRow | { [K in keyof ScheduleRow]: null }

function isScheduleRow<R extends MaybeScheduleRow>(row: R): row is R & ScheduleRow {
  return row.id !== null
}

/**
 * Applies the call's changes (checked before), in one transaction: every change of the schema's
 * schedules one at a time (sql/schedules-serialize.sql), the rows named locked and read, each
 * change worked out by the kernel in order, and only what really changed written, with the
 * version moved and every waiting worker woken (sql/schedules-write.sql). Says whether anything
 * changed: the caller wakes this process's waiters.
 */
export async function changeSchedules(
  db: PostgresPool,
  texts: Record<SqlName, string>,
  params: SchedulesParams,
): Promise<boolean> {
  const changes = scheduleChanges(params)
  if (changes.length === 0) return false
  return db.transaction(async (client) => {
    await client.query(texts['schedules-serialize'])
    const { rows } = await client.query<MaybeScheduleRow & { server_now: string }>(texts['schedules-lock'], [
      [...new Set(changes.map((change) => change.id))],
    ])
    const at = params.now ?? Number(rows[0]!.server_now)
    const before = new Map<string, ScheduleRow>()
    for (const { server_now: _serverNow, ...row } of rows) if (isScheduleRow(row)) before.set(row.id, row)
    // Each schedule as the changes so far left it; null once it is removed.
    const after = new Map<string, ScheduleRow | null>(before)
    let changed = false
    for (const { id, change } of changes) {
      const current = after.get(id) ?? null
      const row = scheduleRowAfter(change, current, at)
      if (row === current) continue
      changed = true
      after.set(id, row)
    }
    if (!changed) return false
    const removed: string[] = []
    const written: ScheduleRow[] = []
    for (const [id, row] of after) {
      if (row === (before.get(id) ?? null)) continue
      if (row === null) removed.push(id)
      else written.push(row)
    }
    await client.query(texts['schedules-write'], [
      removed,
      ...SCHEDULE_COLUMNS.map((column) => written.map((row) => row[column])),
    ])
    return true
  })
}

/** Every schedule, by id, and the store's schedules version, read together. */
export async function readSchedules(
  db: PostgresPool,
  texts: Record<SqlName, string>,
): Promise<SchedulesResult> {
  const rows = await db.query<MaybeScheduleRow & { schedules_version: string | null }>(
    texts.schedules,
    [],
    'schedules',
  )
  return {
    schedules: rows.filter(isScheduleRow).map(toSchedule),
    version: Number(rows[0]?.schedules_version ?? 0),
  }
}

/**
 * A fire (checked before), as one call of functions/fire-schedule.sql: the row locked, compared
 * with what the scheduler read, and the jobs enqueued by enqueue_batch(), in one transaction and
 * one round trip. The caller wakes this process's waiters of a fire's ready jobs.
 */
export async function fireSchedule(
  db: PostgresPool,
  texts: Record<SqlName, string>,
  { id, version, lastSlot, toSlot, jobs, now }: FireScheduleParams,
): Promise<FireScheduleResult> {
  // Unnamed, so planned at each call: a fire is rare, once a slot for each scheduler.
  const [row] = await db.query<
    MaybeScheduleRow & { outcome: FireScheduleResult['outcome']; ids: string | null }
  >(texts['schedule-fire'], [
    id,
    version,
    lastSlot,
    toSlot,
    UNFINISHED_STATES,
    ...binaryEnqueueArrays(jobs),
    now ?? null,
    // A base of lease tokens, for the jobs enqueue_batch() hands to waiting workers.
    newLeaseTokenBase(),
  ])
  const { outcome, ids, ...schedule } = row!
  switch (outcome) {
    case 'fired':
      return { outcome, ids: ids === null ? [] : ids.split(',') }
    case 'overlap':
      return { outcome }
    case 'stale':
      return { outcome, schedule: isScheduleRow(schedule) ? toSchedule(schedule) : null }
  }
}
