/**
 * Schedules as every store keeps them, one row each (a table row, or a Redis hash): what a
 * schedules() call does to a row, how a row reads back as a Schedule, and what a fire may do with
 * one. The stores keep the rows and make each call one atomic step; the rules are written once,
 * here.
 */
import { checkScheduleDefinition, type ScheduleDefinition } from '../../core/schedule.js'
import { ValidationError } from '../../core/errors.js'
import { assertKnownKeys } from '../../core/option-keys.js'
import { assertInteger } from '../../core/validate.js'
import type { FireScheduleParams, Schedule, SchedulesParams } from '../store.js'
import { assertInstant } from '../params.js'

/** A schedule as a store keeps it: snake_case columns, numbers possibly as text, the job as JSON text. */
export interface ScheduleRow {
  id: string
  cron: string
  time_zone: string
  job: string
  missed: string
  overlap: string
  paused_at: number | string | null
  last_slot: number | string
  last_job_id: number | string | null
  version: number | string
  created_at: number | string
  updated_at: number | string
}

/** Every column of a row, in one order, for a store that lists them (Redis's reply). */
export const SCHEDULE_COLUMNS = [
  'id',
  'cron',
  'time_zone',
  'job',
  'missed',
  'overlap',
  'paused_at',
  'last_slot',
  'last_job_id',
  'version',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof ScheduleRow)[]

export function toSchedule(row: ScheduleRow): Schedule {
  const numberOrNull = (value: number | string | null): number | null =>
    value === null ? null : Number(value)
  return {
    id: row.id,
    cron: row.cron,
    timeZone: row.time_zone,
    job: JSON.parse(row.job) as Schedule['job'],
    missed: row.missed as Schedule['missed'],
    overlap: row.overlap as Schedule['overlap'],
    pausedAt: numberOrNull(row.paused_at),
    lastSlot: Number(row.last_slot),
    lastJobId: row.last_job_id === null ? null : String(row.last_job_id),
    version: Number(row.version),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  }
}

const SCHEDULES_KEYS = [
  'put',
  'remove',
  'pause',
  'resume',
  'now',
] as const satisfies readonly (keyof SchedulesParams)[]
const FIRE_KEYS = [
  'id',
  'version',
  'lastSlot',
  'toSlot',
  'jobs',
  'now',
] as const satisfies readonly (keyof FireScheduleParams)[]
/** The most schedules one call may name: a change is one atomic step, and bounded. */
export const SCHEDULES_PER_CALL_MAX = 10_000

export function checkSchedulesParams(params: SchedulesParams): void {
  assertKnownKeys(params, SCHEDULES_KEYS, '')
  const { put, remove, pause, resume, now } = params
  if (put !== undefined) {
    assertList(put, 'put')
    const seen = new Set<string>()
    put.forEach((definition, i) => {
      checkScheduleDefinition(definition, `put[${i}]`)
      if (seen.has(definition.id)) {
        throw new ValidationError('invalid_option', `put[${i}].id`, `names schedule ${definition.id} twice`)
      }
      seen.add(definition.id)
    })
  }
  for (const [key, ids] of [
    ['remove', remove],
    ['pause', pause],
    ['resume', resume],
  ] as const) {
    if (ids === undefined) continue
    assertList(ids, key)
    ids.forEach((id, i) => {
      if (typeof id !== 'string' || id === '') {
        throw new ValidationError('invalid_option', `${key}[${i}]`, 'must be the id of a schedule')
      }
    })
  }
  if (now !== undefined) assertInstant(now, 'now')
}

export function checkFireScheduleParams(params: FireScheduleParams): void {
  assertKnownKeys(params, FIRE_KEYS, '')
  const { id, version, lastSlot, toSlot, jobs, now } = params
  if (typeof id !== 'string' || id === '') {
    throw new ValidationError('invalid_option', 'id', 'must be the id of a schedule')
  }
  assertInteger(version, 'version', { min: 1 })
  assertInstant(lastSlot, 'lastSlot')
  assertInstant(toSlot, 'toSlot')
  if (toSlot < lastSlot) {
    throw new ValidationError('invalid_option', 'toSlot', `must not be before lastSlot (${lastSlot})`)
  }
  assertList(jobs, 'jobs')
  jobs.forEach((job, i) => {
    if (job.schedule?.id !== id || job.schedule.slot <= lastSlot || job.schedule.slot > toSlot) {
      throw new ValidationError(
        'invalid_option',
        `jobs[${i}].schedule`,
        `must be a slot of schedule ${id} after lastSlot and at most toSlot`,
      )
    }
  })
  if (now !== undefined) assertInstant(now, 'now')
}

function assertList(value: unknown, field: string): asserts value is readonly unknown[] {
  if (!Array.isArray(value) || value.length > SCHEDULES_PER_CALL_MAX) {
    throw new ValidationError('invalid_option', field, `must be a list of at most ${SCHEDULES_PER_CALL_MAX}`)
  }
}

/** The columns of a definition, as a row keeps them. */
export function definitionColumns(
  definition: ScheduleDefinition,
): Pick<ScheduleRow, 'cron' | 'time_zone' | 'job' | 'missed' | 'overlap'> {
  return {
    cron: definition.cron,
    time_zone: definition.timeZone,
    job: JSON.stringify(definition.job),
    missed: definition.missed,
    overlap: definition.overlap,
  }
}

/**
 * A row after one change of a schedules() call, or null when the row is gone (or never was);
 * `current` is the row before it, null if none. A change that changes nothing returns `current`
 * itself, so a store writes (and wakes schedulers) only for real changes: a worker that starts
 * with the schedules it always had moves nothing.
 */
export function scheduleRowAfter(
  change: { put: ScheduleDefinition } | { remove: true } | { pause: true } | { resume: true },
  current: ScheduleRow | null,
  at: number,
): ScheduleRow | null {
  if ('put' in change) {
    const columns = definitionColumns(change.put)
    if (current === null) {
      return {
        id: change.put.id,
        ...columns,
        paused_at: null,
        last_slot: at,
        last_job_id: null,
        version: 1,
        created_at: at,
        updated_at: at,
      }
    }
    const same = (Object.keys(columns) as (keyof typeof columns)[]).every(
      (key) => current[key] === columns[key],
    )
    return same ? current : { ...current, ...columns, version: Number(current.version) + 1, updated_at: at }
  }
  if (current === null || 'remove' in change) return null
  if ('pause' in change) {
    if (current.paused_at !== null) return current
    return { ...current, paused_at: at, version: Number(current.version) + 1, updated_at: at }
  }
  if (current.paused_at === null) return current
  return {
    ...current,
    paused_at: null,
    last_slot: Math.max(Number(current.last_slot), at),
    version: Number(current.version) + 1,
    updated_at: at,
  }
}

/** The changes of a schedules() call, one schedule each, in the order they apply. */
export function scheduleChanges(
  params: SchedulesParams,
): { id: string; change: Parameters<typeof scheduleRowAfter>[0] }[] {
  return [
    ...(params.put ?? []).map((definition) => ({ id: definition.id, change: { put: definition } as const })),
    ...(params.remove ?? []).map((id) => ({ id, change: { remove: true } as const })),
    ...(params.pause ?? []).map((id) => ({ id, change: { pause: true } as const })),
    ...(params.resume ?? []).map((id) => ({ id, change: { resume: true } as const })),
  ]
}

/** Whether a fire planned from `params` may go on with the schedule as it is now (`row`). */
export function fireMayProceed(row: ScheduleRow | null, params: FireScheduleParams): row is ScheduleRow {
  return (
    row !== null &&
    row.paused_at === null &&
    Number(row.version) === params.version &&
    Number(row.last_slot) === params.lastSlot
  )
}

/** The job states in which a schedule's last run has not finished, for its overlap policy. */
export const UNFINISHED_STATES = ['scheduled', 'ready', 'active'] as const
