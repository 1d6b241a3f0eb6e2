/**
 * The scheduler: fires the slots of the store's schedules, in every worker that runs one. It keeps
 * the schedules in memory and sleeps on one timer until the next slot of any of them, so an idle
 * scheduler costs nothing between slots, however many schedules there are. It reloads them when
 * the store's schedules version moves (a change wakes every worker, which reads the control record).
 *
 * Exactly one job per slot comes from the store, not from here: a fire moves the schedule's last
 * slot only from the value this scheduler read, in the step that enqueues the job (fireSchedule),
 * so schedulers of any number of processes may race for a slot and one wins; the others learn the
 * schedule as it now is and sleep until its next slot. No leader is elected: a stale one could
 * not double a slot anyway, and with none there is no election to lose slots in.
 */
import { CronSchedule, planFire } from '../core/cron.js'
import { backoffMs } from '../core/backoff.js'
import { firedJob, type ScheduleDefinition } from '../core/schedule.js'
import { StoreUnavailableError } from '../core/errors.js'
import type { JobId } from '../core/job.js'
import type { Schedule, SchedulesResult, Store } from '../store/store.js'

/** The longest a timer may be set for (setTimeout overflows past 2^31 - 1 ms): a far slot is reached in steps. */
const MAX_TIMER_MS = 2_147_483_647
/** Backoff after a failed store call, growing per failure in a row. */
const STORE_ERROR_BACKOFF = { baseMs: 200, maxMs: 10_000 }

export interface SchedulerOptions {
  store: Store
  /** Created or updated at start; schedules not named are left as they are (apps may share a store). */
  schedules?: readonly ScheduleDefinition[]
  /** A slot fired: its jobs (empty when passed over), as the store enqueued them. */
  onFired?: (fire: FiredSlots) => void
  /** A store call failed: the scheduler tries again after a backoff. */
  onError?: (error: unknown) => void
}

/** What one fire did: the slots it fired, and the ids of their jobs in the same order. */
export interface FiredSlots {
  schedule: string
  slots: { slot: number; late: boolean }[]
  ids: JobId[]
  /** The fire's outcome: 'overlap' when the slots were passed over while the last run goes on. */
  outcome: 'fired' | 'overlap'
  /** When this scheduler sent it (Date.now()). */
  at: number
}

interface Entry {
  schedule: Schedule
  cron: CronSchedule
  /** The next slot after lastSlot; null when paused or when the expression never matches again. */
  nextAt: number | null
}

export class Scheduler {
  private readonly store: Store
  private readonly options: SchedulerOptions
  private readonly entries = new Map<string, Entry>()
  /** The store's schedules version this scheduler last loaded; -1 before the first load. */
  private version = -1
  private timer: NodeJS.Timeout | null = null
  /** The tick or reload running now: one at a time, so a fire never races a reload here. */
  private running: Promise<void> = Promise.resolve()
  private reloadWanted = false
  /** The definitions given, until the store has them (start() may meet an unavailable store). */
  private toPut: readonly ScheduleDefinition[] | null
  private failures = 0
  private stopped = false

  constructor(options: SchedulerOptions) {
    this.store = options.store
    this.options = options
    this.toPut = options.schedules ?? []
  }

  /**
   * Writes the schedules given (additively) and loads every schedule of the store. A store that is
   * unavailable for now (a locked SQLite file, a PostgreSQL restart) fails nothing: the scheduler
   * reports it and tries again after a backoff, as a worker's claims do. Any other error (a
   * definition the store refuses) is thrown.
   */
  async start(): Promise<void> {
    try {
      await this.putAndLoad()
    } catch (error) {
      if (!(error instanceof StoreUnavailableError && error.retryable)) throw error
      this.options.onError?.(error)
      this.arm(Date.now() + backoffMs(++this.failures, STORE_ERROR_BACKOFF))
    }
  }

  /** Stops the timer and waits for a fire in flight. */
  async stop(): Promise<void> {
    this.stopped = true
    this.clearTimer()
    await this.running
  }

  /**
   * The store's schedules version as the worker just read it (from the control record, after each
   * wake-up and about once a second): a version not loaded means a schedule changed.
   */
  sawVersion(version: number): void {
    if (version === this.version || this.stopped) return
    this.reloadWanted = true
    this.serially(() => this.reloadIfWanted())
  }

  /** The schedules as this scheduler knows them, with their next slot: for tests and `ferry`. */
  get known(): { schedule: Schedule; nextAt: number | null }[] {
    return [...this.entries.values()].map(({ schedule, nextAt }) => ({ schedule, nextAt }))
  }

  // ── internals ──────────────────────────────────────────────────────────────────────────────

  private serially(step: () => Promise<void>): void {
    this.running = this.running.then(async () => {
      if (this.stopped) return
      try {
        await step()
        this.failures = 0
      } catch (error) {
        this.options.onError?.(error)
        // Try again after a pause: a reload, then whatever is due.
        this.reloadWanted = true
        this.arm(Date.now() + backoffMs(++this.failures, STORE_ERROR_BACKOFF))
        return
      }
      this.arm()
    })
  }

  private async reloadIfWanted(): Promise<void> {
    if (!this.reloadWanted && this.toPut === null) return
    this.reloadWanted = false
    await this.putAndLoad()
  }

  /** Loads every schedule of the store, writing the definitions given first until that has landed. */
  private async putAndLoad(): Promise<void> {
    const put = this.toPut ?? []
    this.load(await this.store.schedules(put.length === 0 ? {} : { put }))
    this.toPut = null
  }

  private load({ schedules, version }: SchedulesResult): void {
    const old = new Map(this.entries)
    this.entries.clear()
    for (const schedule of schedules) {
      this.entries.set(schedule.id, entryOf(schedule, old.get(schedule.id)?.cron))
    }
    this.version = version
    this.arm()
  }

  /** Sets the one timer for the earliest slot (or `at`, sooner, after a failure). */
  private arm(at: number | null = null): void {
    this.clearTimer()
    if (this.stopped) return
    let next = at
    for (const { nextAt } of this.entries.values()) {
      if (nextAt !== null && (next === null || nextAt < next)) next = nextAt
    }
    if (next === null) return
    const delay = Math.min(Math.max(0, next - Date.now()), MAX_TIMER_MS)
    this.timer = setTimeout(() => {
      this.timer = null
      this.serially(() => this.tick())
    }, delay)
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
  }

  /** Fires every schedule whose next slot has come. */
  private async tick(): Promise<void> {
    await this.reloadIfWanted()
    const now = Date.now()
    for (const entry of [...this.entries.values()]) {
      if (this.stopped) return
      if (entry.nextAt !== null && entry.nextAt <= now) await this.fire(entry, now)
    }
  }

  /** Fires what is due of one schedule: every batch of it, for a catch-up of many slots. */
  private async fire(entry: Entry, now: number): Promise<void> {
    for (;;) {
      const { schedule, cron } = entry
      const plan = planFire(cron, schedule.missed, schedule.lastSlot, now)
      if (plan === null) {
        this.entries.set(schedule.id, entryOf(schedule, cron))
        return
      }
      const at = Date.now()
      const result = await this.store.fireSchedule({
        id: schedule.id,
        version: schedule.version,
        lastSlot: schedule.lastSlot,
        toSlot: plan.toSlot,
        jobs: plan.fire.map(({ slot, late }) => firedJob(schedule.id, schedule.job, slot, late)),
      })
      if (result.outcome === 'stale') {
        // Another scheduler fired it, or it changed: go on from the schedule as it is.
        if (result.schedule === null) this.entries.delete(schedule.id)
        else this.entries.set(schedule.id, entryOf(result.schedule, cron))
        // A schedule changed since the last load: the others may have too.
        if (result.schedule !== null && result.schedule.version !== schedule.version) this.reloadWanted = true
        return
      }
      const ids = result.outcome === 'fired' ? result.ids : []
      const fired: Schedule = {
        ...schedule,
        lastSlot: plan.toSlot,
        lastJobId: ids.at(-1) ?? schedule.lastJobId,
      }
      entry = entryOf(fired, cron)
      this.entries.set(schedule.id, entry)
      this.options.onFired?.({ schedule: schedule.id, slots: plan.fire, ids, outcome: result.outcome, at })
      if (!plan.more) return
    }
  }
}

/** A schedule's entry; `cron` is its parsed expression as known before, reused while it is the same
 * (parsing is the costly part of a reload). */
function entryOf(schedule: Schedule, cron?: CronSchedule): Entry {
  const parsed =
    cron !== undefined && cron.cron === schedule.cron && cron.timeZone === schedule.timeZone
      ? cron
      : new CronSchedule(schedule.cron, schedule.timeZone)
  return {
    schedule,
    cron: parsed,
    nextAt: schedule.pausedAt === null ? parsed.nextAfter(schedule.lastSlot) : null,
  }
}
