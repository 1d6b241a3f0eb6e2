/**
 * waitForWork on a server store, with delivery, as PostgreSQL and Redis build it from here on top
 * of the WakeHub: an enqueue that finds a worker waiting claims jobs for it in its own commit and
 * sends them to the worker's store, which hands them to that waiter. What is left to each backend
 * is its server's side: how a waiter is registered (with the look at its queues that must come
 * first), how a delivery's jobs are read when the message carried only their ids, and how jobs
 * are given back.
 *
 * The race this settles once: a delivery may arrive just as its waiter's wait ends otherwise (a
 * timeout, an abort, another wake-up, the store closing). The waiter is then no longer here, and
 * the jobs go to the same worker's next wait if that has begun (its claim would have taken these
 * first), else back in line, in their place and with their attempt unused, as a stopping worker
 * gives back jobs it holds. A waiter takes at most one delivery; one handed to it after its
 * registration was taken out is handled the same way.
 */
import type { ClaimedJob } from '../../core/job.js'
import { giveBack, type Settlement } from '../../core/outcome.js'
import { assertQueueList } from '../../core/validate.js'
import { checkClaimParams, checkNames } from '../params.js'
import { DELIVERY_LEASE_MS, type WaitClaim, type WaitParams, type WaitResult } from '../store.js'
import type { WakeHub } from '../wake-hub.js'

/** A waiter that an enqueue may claim jobs for, as its backend registers it with the server. */
export interface DeliveryWaiter extends WaitClaim {
  /** Unique among the waiters of every store on the server (the store's tag and a count). */
  id: string
  queues: readonly string[]
  names: readonly string[] | undefined
}

/** A delivery as the backend decoded its message. */
export interface Delivery {
  waiterId: string
  /** The jobs in claim order, when the message carried them. */
  jobs?: ClaimedJob[]
  /** Else their ids, for the backend to read (readDelivered). */
  ids?: readonly string[]
}

/** The server's side of waiting, as each backend supplies it. */
export interface DeliveryBackend {
  /** Whether the store is closed: a delivery to a closed store is given back, never handed over. */
  readonly closed: boolean
  /**
   * Whether a wait ends only once its watch has settled, so that a watch's error is always the
   * wait's (Redis: a namespace found gone must stop the worker, though its wake-up may come first).
   * Else the wait ends at once and reports only a watch that failed before (PostgreSQL's watch
   * never fails: its listening connection retries).
   */
  readonly waitsForWatch: boolean
  /**
   * Makes sure this store hears wake-ups and deliveries (LISTEN, a subscription), then looks at
   * the queues once, waking the hub for what it finds, and with a waiter, registers it in the same
   * step unless `stillWaiting()` says its wait has ended meanwhile: whatever was enqueued before is
   * found by the look, whatever after it is delivered or notified. Resolves to whether the waiter
   * may be registered. A rejection ends the wait with its error.
   */
  watch(
    queues: readonly string[],
    names: readonly string[] | undefined,
    waiter: DeliveryWaiter | null,
    stillWaiting: () => boolean,
  ): Promise<boolean>
  /** Takes out the registrations of waits that ended without their delivery. */
  unregister(ids: readonly string[]): Promise<unknown>
  /** Jobs delivered by id, as they are now: one no longer active (cancelled) is left out. */
  readDelivered(ids: readonly string[]): Promise<ClaimedJob[]>
  /**
   * Settles jobs back in line (snoozed to their own run time), on the store's own connection even
   * while it closes. Its wake-up is the server's: a waiter woken here before its registration is
   * gone could be handed jobs that it must give back in turn.
   */
  giveBack(settlements: Settlement[]): Promise<unknown>
}

interface Waiting {
  waiter: DeliveryWaiter
  /** `rerouted`: the jobs were meant for an earlier wait, so this one's registration is still there. */
  take(delivery: Delivery, rerouted: boolean): void
}

export class Deliveries {
  /** The waiters that may be handed jobs, by id; each leaves once handed some. */
  private readonly waiting = new Map<string, Waiting>()
  /** Deliveries being put back in line: a closing store awaits them before its connections go. */
  private readonly givingBack = new Set<Promise<void>>()
  private waiterCount = 0

  constructor(
    private readonly hub: WakeHub,
    private readonly backend: DeliveryBackend,
    /** Makes this store's waiter ids unique on the server. */
    private readonly waiterTag: string,
  ) {}

  /** How many waiters may be handed jobs now. */
  get waitingForDelivery(): number {
    return this.waiting.size
  }

  /** Their ids: what a closing store takes out of the server. */
  waiterIds(): string[] {
    return [...this.waiting.keys()]
  }

  /** The whole of waitForWork, after the store checked it is open. */
  async wait(params: WaitParams): Promise<WaitResult> {
    const { queues, names, signal, timeoutMs, claim } = params
    if (claim !== undefined) {
      const { limit, leaseMs, workerId } = claim
      checkClaimParams({ queues, names, limit, leaseMs, workerId })
    }
    assertQueueList(queues)
    checkNames(names)
    if (signal?.aborted === true) return { reason: 'aborted', jobs: [] }
    // Ends this waiter alone (a delivery, a failed watch); the caller's signal ends it too, through
    // a listener (AbortSignal.any cost 60 µs a wait against 31 µs, hot).
    const ended = new AbortController()
    const onAbort = (): void => ended.abort()
    signal?.addEventListener('abort', onAbort, { once: true })
    const waiter: DeliveryWaiter | null =
      claim === undefined
        ? null
        : {
            limit: claim.limit,
            leaseMs: claim.leaseMs,
            workerId: claim.workerId,
            queues,
            names,
            id: `${this.waiterTag}:${++this.waiterCount}`,
          }
    let handed: Delivery | null = null
    let rerouted = false
    let handOver = (): void => {}
    const handedOver = new Promise<'delivered'>((resolve) => (handOver = () => resolve('delivered')))
    if (waiter !== null) {
      this.waiting.set(waiter.id, {
        waiter,
        take: (delivery, toAnotherWait) => {
          handed = delivery
          rerouted = toAnotherWait
          handOver()
          // The jobs start first: ending the hub's wait (the signal's listeners) took 0.13-0.18 ms
          // p50 between the message and the handler (postgres-wake, redis-wake, traced), so it
          // waits a turn.
          setImmediate(() => ended.abort())
        },
      })
    }
    let waitingStill = true
    let failure: { error: unknown } | null = null
    const registered = this.backend
      .watch(queues, names, waiter, () => waitingStill && handed === null)
      .catch((error: unknown) => {
        failure = { error }
        ended.abort()
        return false
      })
    const reason = await Promise.race([
      this.hub.wait({ queues, timeoutMs, signal: ended.signal }),
      handedOver,
    ])
    waitingStill = false
    signal?.removeEventListener('abort', onAbort)
    if (waiter !== null) this.waiting.delete(waiter.id)
    // From here on, a delivery to this waiter goes elsewhere (deliver).
    const delivery = handed as Delivery | null
    if (waiter !== null && (delivery === null || rerouted)) {
      // Its registration may still be there: take it out, so that no enqueue claims for it any
      // more. After the watch, so the server sees the two in that order; fire and forget, as the
      // server drops a registration whose store is gone.
      void registered
        .then((may) => (may && !this.backend.closed ? this.backend.unregister([waiter.id]) : null))
        .catch(() => {})
    }
    if (delivery !== null) return this.handedOver(delivery)
    if (this.backend.waitsForWatch) await registered
    const failed = failure as { error: unknown } | null
    if (failed !== null && !this.backend.closed) throw failed.error
    return { reason, jobs: [] }
  }

  /**
   * A delivery that came on this store's channel: to its waiter if it still waits, else to the
   * same worker's next wait, else back in line.
   */
  deliver(delivery: Delivery): void {
    const target = this.waiting.get(delivery.waiterId) ?? this.nextWaitFor(delivery)
    if (target === undefined) {
      this.giveBack(delivery)
      return
    }
    // A waiter takes one delivery: a second one goes elsewhere.
    this.waiting.delete(target.waiter.id)
    target.take(delivery, target.waiter.id !== delivery.waiterId)
  }

  /** Resolves once every give-back under way has ended. */
  async givenBack(): Promise<void> {
    while (this.givingBack.size > 0) await Promise.allSettled([...this.givingBack])
  }

  private async handedOver(delivery: Delivery): Promise<WaitResult> {
    if (this.backend.closed) {
      this.giveBack(delivery)
      return { reason: 'aborted', jobs: [] }
    }
    try {
      const jobs = await this.jobsOf(delivery)
      if (jobs.length > 0) return { reason: 'delivered', jobs }
    } catch {
      // Unreadable: the leases run out and recoverExpired puts the jobs back.
    }
    return { reason: 'notified', jobs: [] }
  }

  private giveBack(delivery: Delivery): void {
    const work = (async () => {
      const jobs = await this.jobsOf(delivery)
      if (jobs.length > 0) await this.backend.giveBack(jobs.map(giveBack))
    })().catch(() => {
      // Unreachable store: the leases run out and recoverExpired puts the jobs back.
    })
    this.givingBack.add(work)
    void work.finally(() => this.givingBack.delete(work))
  }

  /** A delivery's jobs, in claim order: from its message, or read by id when they did not fit. */
  private async jobsOf(delivery: Delivery): Promise<ClaimedJob[]> {
    if (delivery.jobs !== undefined) return delivery.jobs
    const ids = delivery.ids ?? []
    return ids.length === 0 ? [] : this.backend.readDelivered(ids)
  }

  /**
   * A waiter of this store that jobs delivered to a wait that has ended can go to as if delivered
   * to it: the same worker (id and lease), waiting on every queue of the jobs, for their names,
   * with room for all of them. A worker's queues do not change, so its claim would have taken
   * these first. Only a delivery that carries its jobs: the others are rare, and would need
   * reading first.
   */
  private nextWaitFor(delivery: Delivery): Waiting | undefined {
    const jobs = delivery.jobs
    if (jobs === undefined || jobs.length === 0) return undefined
    const { workerId, leaseExpiresAt, updatedAt } = jobs[0]!
    // A delivery's lease is the waiter's, cut to DELIVERY_LEASE_MS, from the enqueue's commit.
    const leaseMs = (leaseExpiresAt ?? NaN) - updatedAt
    for (const waiting of this.waiting.values()) {
      const { waiter } = waiting
      if (
        waiter.workerId === workerId &&
        Math.min(waiter.leaseMs, DELIVERY_LEASE_MS) === leaseMs &&
        waiter.limit >= jobs.length &&
        jobs.every(
          (job) =>
            waiter.queues.includes(job.queue) &&
            (waiter.names === undefined || waiter.names.includes(job.name)),
        )
      ) {
        return waiting
      }
    }
    return undefined
  }
}
