/**
 * The slots of a cron schedule, and which of the due ones to fire. Pure (no store, no timer, no
 * clock): the durable scheduler passes `now` and the schedule's last slot and writes the plan in one
 * transaction, so what fires depends only on what the store holds, not on whether a process was
 * awake when a slot came.
 *
 * Slots come from croner, with `fixedTimeRule: 'no-wildcard'`, because Ferry follows the Vixie/ISC
 * cron DST rules: a fixed-time job (no wildcard and no step in seconds, minutes and hours) whose
 * time falls in a spring-forward gap runs once, at the end of the gap; one whose time occurs twice
 * runs once, at the first occurrence; an interval job keeps its real-time cadence. Croner's default
 * ('single-value') counts only one value per field as fixed, so it would skip the 02:30 run of
 * `30 2,14 * * *` on spring-forward day and run `30 1,14 * * *` at 01:30 twice on fall-back day.
 * 'no-wildcard' counts lists and ranges as fixed, as Vixie does, and a step (`0 0-23/2 * * *`)
 * still makes an interval job, as Ferry's rule says. Checked by experiment over each DST transition
 * of 2026 in every zone of Node 20's ICU (fixed jobs at each quarter hour; every 15 and 30 minutes;
 * hourly), and croner's backward search (newestIn) agreed with its forward one at every slot of 14
 * patterns in 14 zones over those days.
 * Where the outcome still differs from the rule:
 * - A gap that crosses local midnight (in 2026 only America/Nuuk and America/Scoresbysund, 23:00 to
 *   00:00 on Saturday 28 March): a fixed time inside it (23:00-23:59) does not run that day. Croner
 *   moves a time in a gap only to a later time on the same day, and there is none; Vixie would run
 *   it at 00:00. Not corrected here, as that needs the zone's transitions, which croner does not
 *   expose; cron.test.ts pins the behaviour so that a croner upgrade that changes it is noticed.
 * - Slots are wall-clock times, so an interval job keeps real-time cadence only when the shift is a
 *   whole number of its steps: across a transition an hourly job is 30 or 90 minutes apart in
 *   Australia/Lord_Howe (a 30-minute shift), and a two-hourly one 1 or 3 hours apart in a zone with a
 *   one-hour shift, as in Vixie cron.
 */
import { Cron } from 'croner'

import { ValidationError } from './errors.js'

/**
 * What a schedule does with slots no scheduler fired in time (every worker was down, or the
 * schedule was far behind): the newest slot is on time while at most a minute late; every other
 * due slot is missed.
 * - `skip`: missed slots are passed over; only an on-time slot fires
 * - `once`: every due slot together fires one job, for the newest slot (late if any was missed)
 * - `all`: each slot of the last 24 hours fires its own job, oldest first
 */
export type MissedPolicy = 'skip' | 'once' | 'all'
export const MISSED_POLICIES: readonly MissedPolicy[] = ['skip', 'once', 'all']
/** How late the newest due slot may be fired and still count as on time (not missed): 60 s. */
export const ON_TIME_GRACE_MS = 60_000
/** 'all' catches up slots at most this far back (24 h); older ones are passed over. */
export const CATCH_UP_WINDOW_MS = 86_400_000
/** 'all' fires at most this many slots per call (one store transaction); the caller calls again. */
export const CATCH_UP_BATCH = 100
/** A cron expression longer than this is refused. */
export const CRON_MAX_LENGTH = 200

/** For the scheduler to check a policy given as an option. */
export function isMissedPolicy(value: unknown): value is MissedPolicy {
  return (MISSED_POLICIES as readonly unknown[]).includes(value)
}

/** A parsed, checked cron expression in its IANA time zone. Build once per schedule, reuse. */
export class CronSchedule {
  readonly cron: string
  readonly timeZone: string
  /** Built without a callback, so croner starts no timer: it is only asked for dates. */
  readonly #cron: Cron

  /**
   * Accepts croner's 5 fields (minutes), 6 (leading seconds) and 7 (trailing year), and its
   * nicknames (`@daily`). Throws ValidationError('invalid_option', 'cron' | 'timeZone', …).
   */
  constructor(cron: string, timeZone = 'UTC') {
    if (typeof cron !== 'string') {
      throw new ValidationError('invalid_option', 'cron', `must be a string (got ${typeof cron})`)
    }
    if (cron.length > CRON_MAX_LENGTH) {
      throw new ValidationError(
        'invalid_option',
        'cron',
        `is ${cron.length} characters long; at most ${CRON_MAX_LENGTH}`,
      )
    }
    // Croner reads any string with a colon as a date to run once; no cron pattern has one.
    if (cron.includes(':')) {
      throw new ValidationError(
        'invalid_option',
        'cron',
        `"${cron}" is a date, not a cron pattern (a schedule repeats, e.g. "0 2 * * *")`,
      )
    }
    assertTimeZone(timeZone)
    try {
      this.#cron = new Cron(cron, { timezone: timeZone, fixedTimeRule: 'no-wildcard' })
    } catch (error) {
      throw new ValidationError('invalid_option', 'cron', `"${cron}" is not a cron pattern: ${reason(error)}`)
    }
    // A pattern such as February 30 would be accepted, and then never fire.
    if (this.#cron.nextRun(new Date(0)) === null) {
      throw new ValidationError('invalid_option', 'cron', `"${cron}" matches no time from 1970 on`)
    }
    this.cron = cron
    this.timeZone = timeZone
  }

  /** The first slot (epoch ms) strictly after `afterMs`, or null when there is none. */
  nextAfter(afterMs: number): number | null {
    return this.#cron.nextRun(new Date(afterMs))?.getTime() ?? null
  }

  /**
   * The newest slot at or before `atMs` and strictly after `afterMs`, or null. One backward search,
   * however far back `afterMs` is.
   */
  newestIn(afterMs: number, atMs: number): number | null {
    if (atMs <= afterMs) return null
    // previousRuns gives slots before its reference, to the second; slots are whole seconds, so
    // 1 ms past the start of atMs's second takes a slot at atMs and none after it.
    const reference = Math.floor(atMs / 1000) * 1000 + 1
    const newest = this.#cron.previousRuns(1, new Date(reference))[0]?.getTime()
    return newest !== undefined && newest > afterMs ? newest : null
  }

  /** The next `count` slots after `afterMs`, fewer if the pattern ends (previews). */
  upcoming(afterMs: number, count: number): number[] {
    const slots: number[] = []
    for (let slot = this.nextAfter(afterMs); slot !== null && slots.length < count;) {
      slots.push(slot)
      slot = this.nextAfter(slot)
    }
    return slots
  }
}

export interface SlotToFire {
  slot: number
  late: boolean
}

export interface FirePlan {
  /** The schedule's new last slot: the newest slot fired or passed over. */
  toSlot: number
  /** Jobs to enqueue, oldest slot first; may be empty (every due slot passed over). */
  fire: SlotToFire[]
  /** Only with 'all': more due slots remain after toSlot; call again at once. */
  more: boolean
}

/**
 * What to fire now for a schedule whose last slot is `lastSlot`, or null when no slot is due.
 * Due slots are those in (lastSlot, now]. The newest due slot is on time if now - slot <=
 * ON_TIME_GRACE_MS; every other due slot is missed.
 * - skip: the newest due slot if it is on time; missed slots are passed over.
 * - once: one job for them all at the newest due slot, late if any due slot was missed.
 * - all: every due slot newer than now - CATCH_UP_WINDOW_MS, oldest first, CATCH_UP_BATCH at most
 *   (`more` says there are others); older ones are passed over.
 * The cost is a few searches (plus one per slot fired), never one per due slot: a per-second
 * schedule a week behind plans as fast as one a second behind.
 */
export function planFire(
  schedule: CronSchedule,
  policy: MissedPolicy,
  lastSlot: number,
  now: number,
): FirePlan | null {
  const newest = schedule.newestIn(lastSlot, now)
  if (newest === null) return null
  const onTime = now - newest <= ON_TIME_GRACE_MS
  switch (policy) {
    case 'skip':
      return { toSlot: newest, fire: onTime ? [{ slot: newest, late: false }] : [], more: false }
    case 'once': {
      const missed = !onTime || schedule.nextAfter(lastSlot) !== newest
      return { toSlot: newest, fire: [{ slot: newest, late: missed }], more: false }
    }
    case 'all': {
      const windowStart = now - CATCH_UP_WINDOW_MS
      const fire: SlotToFire[] = []
      const from = Math.max(lastSlot, windowStart)
      for (
        let slot = schedule.nextAfter(from);
        slot !== null && slot <= now;
        slot = schedule.nextAfter(slot)
      ) {
        fire.push({ slot, late: !(slot === newest && onTime) })
        if (fire.length === CATCH_UP_BATCH) break
      }
      // Fire is empty only when every due slot is at or before windowStart, so one is there.
      const toSlot = fire.at(-1)?.slot ?? schedule.newestIn(lastSlot, windowStart)!
      return { toSlot, fire, more: toSlot < newest }
    }
    default:
      throw new ValidationError(
        'invalid_option',
        'policy',
        `must be one of ${MISSED_POLICIES.join(', ')} (got ${String(policy)})`,
      )
  }
}

/** The unique key that guards a slot's job, e.g. cron:nightly:2026-12-03T02:00:00.000Z. */
export function slotKey(id: string, slot: number): string {
  return `cron:${id}:${new Date(slot).toISOString()}`
}

function assertTimeZone(timeZone: unknown): void {
  if (typeof timeZone !== 'string') {
    throw new ValidationError('invalid_option', 'timeZone', `must be a string (got ${typeof timeZone})`)
  }
  try {
    // Croner would take '' as the process's local zone; Intl refuses it, as any unknown name.
    new Intl.DateTimeFormat('en-US', { timeZone })
  } catch (error) {
    throw new ValidationError(
      'invalid_option',
      'timeZone',
      `"${timeZone}" is not an IANA time zone such as "Europe/London": ${reason(error)}`,
    )
  }
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
