import type { ExpiredLease, RecoverResult, Store } from '../store/store.js'
import { monotonicMs } from '../core/monotonic.js'
import { jittered, PeriodicSweep } from './periodic-sweep.js'

export interface RecovererOptions {
  store: Store
  intervalMs: number
  /** This worker's own lease: how long a newly started recoverer is careful (see below). */
  leaseMs: number
  onDone: (result: RecoverResult) => void
  onError: (error: unknown) => void
  /** Milliseconds of a clock that never steps. Default monotonicMs(); tests inject their own. */
  monotonicNow?: () => number
}

/** How far the store's clock may stray from ours between two sweeps before it counts as a step. */
const STEP_TOLERANCE_MS = 100
const STEP_TOLERANCE_RATE = 0.001
/** Leases read per call, and recovered per call. */
const SWEEP_LIMIT = 1000

/** The store's clock as a sweep read it, between two readings of ours. */
interface Reading {
  storeNow: number
  sentAt: number
  receivedAt: number
}

/**
 * Puts back jobs whose worker died or froze: their lease expired. Every worker runs one; the
 * sweep is idempotent, so many of them at once do no harm. It sweeps at start, then every
 * interval with a little jitter, so workers started together do not sweep together.
 *
 * Wall clocks step (NTP corrections, a VM resumed, an operator's `date -s`), and a lease's expiry is
 * an instant on the store's clock. A forward step makes every healthy lease look expired at once;
 * taken back, their jobs would run twice. So the recoverer reads the expired leases first, with the
 * store's clock, and compares how far that clock moved since its last sweep with how far its own
 * monotonic clock did. While they agree it recovers what expired. When the store's clock jumped
 * ahead (and for a while after starting, when it cannot know), it is careful: it recovers a lease
 * only once it has watched it stay expired, and unrenewed, for half the lease's length, which is
 * longer than a healthy holder takes to renew (every third of its lease). When the store's clock
 * went back, leases renewed "in the future" would hold a dead worker's job until the clock caught
 * up: it has the store clamp them to their own length from now (and does so at start, for a step
 * it did not see). docs/reliability.md gives the bounds.
 */
export class Recoverer extends PeriodicSweep<RecoverResult> {
  private readonly monotonicNow: () => number
  private last: Reading | null = null
  /** Until then (our clock), recover only leases watched for long enough. */
  private carefulUntil = -Infinity
  /** Leases seen expired while careful: when each was first seen (our clock), by id. */
  private readonly watched = new Map<string, { lease: ExpiredLease; since: number }>()
  /** From the last sweep: how long until the next lease that had not run out will (store time). */
  private nextExpiryIn: number | null = null

  constructor(private readonly options: RecovererOptions) {
    super(options.onError)
    this.monotonicNow = options.monotonicNow ?? monotonicMs
  }

  start(): void {
    this.stopped = false
    // A step may have come just before: careful for one lease, and clamp (the first sweep does).
    this.carefulUntil = this.monotonicNow() + this.options.leaseMs
    this.last = null
    this.schedule(0, () => this.nextSweepIn())
  }

  /** One sweep, until nothing expired is left (careful, it waits for what it watches). */
  protected async sweep(): Promise<RecoverResult> {
    const { store } = this.options
    const total: RecoverResult = { retried: [], dead: [], clamped: 0, expired: [] }
    this.nextExpiryIn = null
    while (!this.stopped) {
      const sentAt = this.monotonicNow()
      const { now, leases, nextExpiresAt, startDeadlinesPassed } = await store.findExpiredLeases({
        limit: SWEEP_LIMIT,
      })
      this.nextExpiryIn = nextExpiresAt === null ? null : nextExpiresAt - now
      const receivedAt = this.monotonicNow()
      const step = this.stepSince({ storeNow: now, sentAt, receivedAt })
      this.last = { storeNow: now, sentAt, receivedAt }
      // Started (a step it did not see), or the store's clock went back: the store clamps leases
      // set "in the future" in the recovery's own call.
      const clampLeases = step === null || step < 0
      if (step !== null && step > 0) this.carefulUntil = Math.max(this.carefulUntil, receivedAt + step)

      const careful = receivedAt < this.carefulUntil
      const due = careful ? this.watch(leases, receivedAt) : leases
      if (!careful) this.watched.clear()
      let expiredNow = 0
      if (due.length > 0 || clampLeases || startDeadlinesPassed) {
        const { retried, dead, clamped, expired } = await store.recoverExpired({
          leases: due,
          clampLeases,
          expireJobs: startDeadlinesPassed,
          limit: SWEEP_LIMIT,
        })
        total.retried.push(...retried)
        total.dead.push(...dead)
        total.clamped += clamped
        total.expired.push(...expired)
        expiredNow = expired.length
        for (const id of [...retried, ...dead]) this.watched.delete(id)
      }
      if (leases.length === SWEEP_LIMIT && due.length > 0) continue
      if (expiredNow === SWEEP_LIMIT) continue
      // Careful, with leases still being watched: come back when the first is due, not a whole
      // interval later.
      const nextDueAt = careful ? this.nextWatchedDueAt() : null
      if (nextDueAt === null || this.stopped) break
      await this.wait(nextDueAt - this.monotonicNow())
    }
    this.options.onDone(total)
    return total
  }

  /**
   * How far the store's clock stepped since the last sweep (positive: ahead, negative: back), 0 when
   * it moved as ours did, null for the first sweep. The store read its clock some time between our
   * sending and receiving, both times: so between two sweeps it moved at least the time between the
   * first answer and the second question, and at most that between the first question and the
   * second answer.
   */
  private stepSince(reading: Reading): number | null {
    const last = this.last
    if (last === null) return null
    const moved = reading.storeNow - last.storeNow
    const least = reading.sentAt - last.receivedAt
    const most = reading.receivedAt - last.sentAt
    const tolerance = STEP_TOLERANCE_MS + STEP_TOLERANCE_RATE * most
    if (moved > most + tolerance) return moved - most
    if (moved < least - tolerance) return moved - least
    return 0
  }

  /**
   * Notes these expired leases as watched from now (those not seen before, or changed: renewed and
   * expired again, claimed again) and returns those watched for half their length already.
   */
  private watch(leases: readonly ExpiredLease[], now: number): ExpiredLease[] {
    const listed = new Set<string>()
    const due: ExpiredLease[] = []
    for (const lease of leases) {
      listed.add(lease.id)
      const seen = this.watched.get(lease.id)
      if (
        seen === undefined ||
        seen.lease.leaseToken !== lease.leaseToken ||
        seen.lease.leaseExpiresAt !== lease.leaseExpiresAt
      ) {
        this.watched.set(lease.id, { lease, since: now })
      } else if (now - seen.since >= watchMs(lease)) {
        due.push(lease)
      }
    }
    // Not expired any more (renewed) or gone (settled, recovered elsewhere): nothing to watch.
    for (const id of this.watched.keys()) if (!listed.has(id)) this.watched.delete(id)
    return due
  }

  private nextWatchedDueAt(): number | null {
    let next: number | null = null
    for (const { lease, since } of this.watched.values()) {
      const dueAt = since + watchMs(lease)
      if (next === null || dueAt < next) next = dueAt
    }
    return next
  }

  /**
   * When the next sweep starts: after the interval (with jitter), or when the next lease the last
   * sweep saw runs out, if sooner. Healthy leases are renewed long before (a third of the way), so
   * this wakes no idle worker more often; it brings back soon a short lease nobody renews: a job
   * handed to a waiter that froze (a delivery lease, DELIVERY_LEASE_MS).
   */
  private nextSweepIn(): number {
    const interval = jittered(this.options.intervalMs)
    const expiry = this.nextExpiryIn
    return expiry === null ? interval : Math.min(interval, Math.max(1, expiry + 1))
  }
}

/** How long a lease must be seen expired and unrenewed, when careful: half its length. */
function watchMs(lease: ExpiredLease): number {
  return Math.max(1, lease.leaseMs / 2)
}
