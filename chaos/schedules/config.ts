/**
 * The shape of a schedules chaos run (docs/reliability.md, "The schedules chaos run"): what the
 * scheduler processes define, and the numbers the supervisor and the checker share.
 */
import type { ScheduleOptions } from '../../src/core/schedule.js'

export const SCHEDULER_COUNT = 3
export const JOB_NAME = 'chaos-tick'
export const QUEUE = 'chaos-schedules'

/**
 * The same in every process, one per missed-slot policy. Their slots all fall on whole seconds,
 * which is where the nemesis aims its kills.
 */
export const SCHEDULES: ScheduleOptions[] = [
  { id: 'every-second-skip', cron: '* * * * * *', missed: 'skip', job: { name: JOB_NAME, queue: QUEUE } },
  { id: 'every-2s-once', cron: '*/2 * * * * *', missed: 'once', job: { name: JOB_NAME, queue: QUEUE } },
  { id: 'every-second-all', cron: '* * * * * *', missed: 'all', job: { name: JOB_NAME, queue: QUEUE } },
]
/** The spacing of the slot boundaries the kills are aimed at. */
export const BOUNDARY_MS = 1000
/** A kill lands this close to a slot boundary, either side. */
export const KILL_JITTER_MS = 100
/**
 * Half the kills land in this much time after a boundary instead, while the fires of its slots
 * are in flight: on SQLite a scheduler sent a fire 19 ms after its slot, and had the answer 28 ms
 * after it, at the median (a 30 s run on the 2-core machine at load 6).
 */
export const FIRE_WINDOW_MS = 50
/** The nemesis waits this many boundaries, at least and at most, between kills. */
export const KILL_EVERY_BOUNDARIES = [1, 3] as const
/**
 * A kill takes the last ready scheduler only this often (otherwise it kills nothing), so that one
 * is live most of the time: a start took 2.7 s at the median (4.2 s at p90) on the 2-core machine
 * at load 11, and killing whichever was ready left none ready for 109 s of a 190 s run.
 */
export const LAST_READY_KILL_SHARE = 0.2
/** A killed scheduler is restarted after this long (ms, uniform); a start costs about 0.3 s more. */
export const RESTART_DELAY_MS = [100, 1500] as const
/**
 * The share of kills that take down every scheduler at once, for this long, so that slots pass
 * with no scheduler at all and the missed-slot policies decide. A run has at least one: the first
 * comes by half-time at the latest.
 */
export const OUTAGE_SHARE = 0.1
export const OUTAGE_MS = [2500, 6000] as const
/**
 * After the faults, every scheduler runs undisturbed this long once all are ready, so the slots
 * missed in a last outage are caught up before the run stops.
 */
export const SETTLE_MS = 4000
/** The longest the supervisor waits for the schedulers to be ready after the faults. */
export const READY_TIMEOUT_MS = 30_000
/**
 * A scheduler ready from a slot until this long after it must have fired it (skip, once) or fired
 * it on time (all): its timer is set for the slot, so it plans the fire within milliseconds, far
 * sooner than the next per-second slot, and the store call that follows decides nothing by time.
 */
export const LIVE_MARGIN_MS = 1000
/** Slots this close to the stop are not required to have fired: the stop may cut their fire. */
export const END_MARGIN_MS = 1000
