/**
 * The Store contract's schedule calls, schedules() and fireSchedule() (store.ts declares them):
 * schedules as a store keeps them, and what a fire presents and gets back. Imported through
 * store.ts, which re-exports them with the rest of the contract.
 */
import type { JobId, NewJob } from '../core/job.js'
import type { ScheduleDefinition } from '../core/schedule.js'

export interface Schedule extends ScheduleDefinition {
  /** When it was paused, or null: a paused schedule fires nothing, and resuming passes over the slots it missed. */
  pausedAt: number | null
  /**
   * The newest slot fired or passed over: the slots after it are due as their time comes. A new
   * schedule starts at its creation, a resumed one at its resumption.
   */
  lastSlot: number
  /** The job of the schedule's last fire, for its overlap policy; null before the first. */
  lastJobId: JobId | null
  /**
   * Moves on with every change of the schedule's definition or pause: a fire presents the version
   * it was planned from, and a changed schedule refuses it.
   */
  version: number
  createdAt: number
  updatedAt: number
}

export interface SchedulesParams {
  /**
   * Create these, or replace the definitions of those that exist (their lastSlot, pause and last
   * job stay; a definition equal to the stored one changes nothing). Schedules not named are left
   * alone: apps sharing a store do not remove each other's.
   */
  put?: readonly ScheduleDefinition[]
  /** Delete these (ids of no schedule are ignored). */
  remove?: readonly string[]
  pause?: readonly string[]
  /** Resume these, from now: the slots passed while paused are not fired. */
  resume?: readonly string[]
  now?: number
}

export interface SchedulesResult {
  /** Every schedule, by id, after the changes. */
  schedules: Schedule[]
  /** The store's schedules version: moves on with every change to any schedule (ControlRecord has it too). */
  version: number
}

export interface FireScheduleParams {
  id: string
  /** The schedule's version and lastSlot as the fire was planned from them. */
  version: number
  lastSlot: number
  /** The schedule's new lastSlot: the newest slot fired or passed over (at least lastSlot). */
  toSlot: number
  /**
   * The jobs of the slots fired, oldest first, each with its `schedule` ({ id, slot, late }) and
   * the unique key of its slot (cron:<id>:<slot>); empty when every due slot is passed over.
   */
  jobs: readonly NewJob[]
  now?: number
}

/**
 * - `fired`: lastSlot moved to toSlot and the jobs were enqueued (`ids`, in the order given; a job
 *   whose slot key was held already is not enqueued again, its holder's id is given)
 * - `overlap`: lastSlot moved to toSlot, no job enqueued: the overlap policy is `skip` and the last
 *   fire's job has not finished
 * - `stale`: nothing written: the schedule is not as read (another scheduler fired these slots,
 *   or it was changed, paused or removed); `schedule` is how it is now, null if it is gone
 */
export type FireScheduleResult =
  | { outcome: 'fired'; ids: JobId[] }
  | { outcome: 'overlap' }
  | { outcome: 'stale'; schedule: Schedule | null }
