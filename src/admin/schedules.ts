// Schedules as the `ferry schedules` commands (and a dashboard) manage them at run time: each call
// checks what it is given before the store is touched and makes its change in one store call. The
// store keeps the schedules; every worker's scheduler fires them (docs/schedules.md).
import { CronSchedule } from '../core/cron.js'
import { ScheduleNotFoundError } from '../core/errors.js'
import type { JobId } from '../core/job.js'
import { firedJob, normalizeSchedule, type ScheduleOptions } from '../core/schedule.js'
import type { Schedule, Store } from '../store/store.js'

/** A schedule with its next slots, as `ferry schedules list` shows it. */
export interface ScheduleReport extends Schedule {
  /** The next slots after its last one (none while paused), at most `upcoming` of them. */
  upcoming: number[]
}

/** Every schedule of the store, by id, each with its next `upcoming` slots. */
export async function listSchedules(
  store: Store,
  { upcoming = 3 }: { upcoming?: number } = {},
): Promise<ScheduleReport[]> {
  const { schedules } = await store.schedules()
  return schedules.map((schedule) => reportOf(schedule, upcoming))
}

/**
 * Creates a schedule, or replaces the definition of the one with its id (its last slot, pause and
 * last job stay, so no slot fires twice for the change). Returns it as stored.
 */
export async function putSchedule(store: Store, options: ScheduleOptions): Promise<ScheduleReport> {
  const definition = normalizeSchedule(options)
  const { schedules } = await store.schedules({ put: [definition] })
  return reportOf(found(schedules, definition.id), 3)
}

/** Removes a schedule (its fired jobs stay). NotFoundError when there is none of that id. */
export async function removeSchedule(store: Store, id: string): Promise<void> {
  await existing(store, id)
  await store.schedules({ remove: [id] })
}

/** Pauses a schedule: no scheduler fires it until it is resumed. */
export async function pauseSchedule(store: Store, id: string): Promise<ScheduleReport> {
  // The store ignores an id of no schedule: its absence from the answer is the refusal.
  return reportOf(found((await store.schedules({ pause: [id] })).schedules, id), 3)
}

/** Resumes a paused schedule from now: the slots it passed while paused are not fired. */
export async function resumeSchedule(store: Store, id: string): Promise<ScheduleReport> {
  return reportOf(found((await store.schedules({ resume: [id] })).schedules, id), 3)
}

/**
 * Enqueues the schedule's job now, outside its slots (its slots fire as before, and a paused
 * schedule can be run too): the job carries `schedule: { id, slot: now }` like a fired one, without
 * a slot's unique key, so each run-now is a run.
 */
export async function runScheduleNow(store: Store, id: string): Promise<JobId> {
  const schedule = await existing(store, id)
  const job = { ...firedJob(schedule.id, schedule.job, Date.now(), false), uniqueKey: null }
  const [result] = await store.enqueue({ jobs: [job] })
  return result!.id
}

async function existing(store: Store, id: string): Promise<Schedule> {
  return found((await store.schedules()).schedules, id)
}

function found(schedules: readonly Schedule[], id: string): Schedule {
  const schedule = schedules.find((s) => s.id === id)
  if (schedule === undefined) throw new ScheduleNotFoundError(id)
  return schedule
}

function reportOf(schedule: Schedule, upcoming: number): ScheduleReport {
  return {
    ...schedule,
    upcoming:
      schedule.pausedAt === null
        ? new CronSchedule(schedule.cron, schedule.timeZone).upcoming(schedule.lastSlot, upcoming)
        : [],
  }
}
