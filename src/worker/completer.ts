import { backoffMs } from '../core/backoff.js'
import { isStoreLost, JobLockedError } from '../core/errors.js'
import type { ClaimedJob } from '../core/job.js'
import type { Settlement } from '../core/outcome.js'
import { TickBatcher } from '../core/tick-batcher.js'
import type { ClaimParams, SettleResult, Store } from '../store/store.js'
import { monotonicMs } from '../core/monotonic.js'

const SETTLE_ATTEMPTS = 8
/** A store call that failed is tried again after this backoff (the claim loop's too). */
export const STORE_ERROR_BACKOFF_MS = { baseMs: 100, factor: 2, maxMs: 5000 }
/** An outcome whose row was locked is written again within 10 ms first: most locks last a statement. */
const LOCKED_ROW_BACKOFF_MS = { baseMs: 10, factor: 3, maxMs: 5000 }

/** A claim a flush carries, for the room its outcomes leave: one store call instead of two. */
export interface CarriedClaim {
  params: ClaimParams
  /** The jobs it claimed, and the monotonicMs() at which the call that leased them was sent. */
  claimed(jobs: readonly ClaimedJob[], sentAt: number): void
  /** The call ended, whether it claimed or failed. */
  done(): void
}

export interface CompleterOptions {
  store: Store
  /** Two flushes may be in flight (a worker with prefetch runs jobs while the last ones are written). */
  maxInFlight: number
  /**
   * Asked as each flush leaves: the claim to carry with it, or null. `othersSettling`: jobs whose
   * outcome is on its way in other flushes (this flush's own commit before its claim).
   */
  claimToCarry: (othersSettling: number) => CarriedClaim | null
  locks: LockedRows
  /** A store call failed (each try of a settlement that is tried again). */
  onStoreError: (error: unknown) => void
}

/**
 * Writes the outcomes of ended attempts. Those of one tick go to the store in one `settle` call
 * (a TickBatcher), which also carries the claim for the room they left when the claim loop waits
 * for it. A settlement must not be lost to a passing store failure: it is tried again with backoff
 * while the job's lease lasts. One whose row is locked is written again, alone, until the lock
 * goes or the worker finishes. The worker keeps the leases of the jobs being settled (`jobs`)
 * until the store has their outcome.
 */
export class Completer {
  private readonly store: Store
  private readonly batcher: TickBatcher<Settlement, SettleResult>
  private readonly claimToCarry: (othersSettling: number) => CarriedClaim | null
  private readonly locks: LockedRows
  private readonly onStoreError: (error: unknown) => void
  /** Ended, their outcome being written. */
  private readonly settling = new Map<string, ClaimedJob>()
  /** Outcomes held back for the next one (settle's `holdMs`), each with what sends it now, in order. */
  private readonly heldBack = new Map<string, () => void>()
  /** Set once the worker has finished: settlements waiting for a lock stop trying. */
  private finished = false
  /** Wakes finish() waiting for the last outcomes. */
  private onSettled: (() => void) | null = null

  constructor(options: CompleterOptions) {
    this.store = options.store
    this.claimToCarry = options.claimToCarry
    this.locks = options.locks
    this.onStoreError = options.onStoreError
    this.batcher = new TickBatcher((settlements) => this.flush(settlements), {
      maxInFlight: options.maxInFlight,
    })
  }

  /** Settlements wait for the next flush: it will carry a claim for the room they leave. */
  get hasPending(): boolean {
    return this.batcher.hasPending || this.heldBack.size > 0
  }

  /** The jobs whose outcome is being written: their leases must be kept until it is. */
  get jobs(): IterableIterator<ClaimedJob> {
    return this.settling.values()
  }

  /** How many jobs' outcomes are being written (or wait to be). */
  get settlingCount(): number {
    return this.settling.size
  }

  /**
   * Writes a job's settlement: resolves with the store's answer ('locked' if given up on while its
   * row stayed locked), rejects when the store stayed unreachable (the lease runs out and the job
   * runs again). The job leaves `jobs` before either.
   *
   * With `holdMs`, the settlement waits for the next one that is not held (it then goes first,
   * in the same flush), or at most `holdMs`: the worker holds an outcome back while the next job
   * of its slot, already started, is about to end, so that both share one commit, as two short
   * inline jobs of one tick do. A settlement that is not held sends every held one with it.
   */
  async settle(job: ClaimedJob, settlement: Settlement, holdMs = 0): Promise<SettleResult> {
    this.settling.set(job.id, job)
    try {
      if (holdMs > 0) return await this.holdBack(job.id, settlement, holdMs)
      this.releaseHeld()
      return await this.submit(settlement)
    } finally {
      this.settling.delete(job.id)
      this.onSettled?.()
    }
  }

  /**
   * Flushes what waits, then waits until every outcome is written (some may wait for a lock), at
   * most `maxWaitMs`; outcomes still waiting for a lock are then left to their leases.
   */
  async finish(maxWaitMs: number): Promise<void> {
    this.releaseHeld()
    await this.batcher.drain()
    const deadline = monotonicMs() + maxWaitMs
    while (this.settling.size > 0 && monotonicMs() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - monotonicMs()))
        this.onSettled = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      this.onSettled = null
    }
    this.finished = true
  }

  private holdBack(id: string, settlement: Settlement, holdMs: number): Promise<SettleResult> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.releaseHeld(), holdMs)
      this.heldBack.set(id, () => {
        clearTimeout(timer)
        this.submit(settlement).then(resolve, reject)
      })
    })
  }

  /** Sends every held settlement to the next flush, in the order they were held. */
  private releaseHeld(): void {
    if (this.heldBack.size === 0) return
    const held = [...this.heldBack.values()]
    this.heldBack.clear()
    for (const send of held) send()
  }

  private async submit(settlement: Settlement): Promise<SettleResult> {
    for (let attempt = 1, lockedFor = 0; ; attempt++) {
      try {
        const result = await this.batcher.submit(settlement)
        if (result !== 'locked') {
          this.locks.written(settlement.id)
          return result
        }
        // Its row is locked: for a moment by this worker's own renewal, or outside Ferry. Only this
        // outcome waits, written again soon, then with backoff while the lock lasts. A finishing
        // worker waits for it at most a lease (finish()), then leaves it to the lease.
        this.locks.found(settlement.id, 'outcome')
        await sleep(backoffMs(++lockedFor, LOCKED_ROW_BACKOFF_MS))
        if (this.finished) return result
        attempt--
      } catch (error) {
        this.onStoreError(error)
        // Past the lease the job is recovered and runs again: give up and let that happen. A store
        // that is gone will not take it either.
        if (attempt >= SETTLE_ATTEMPTS || isStoreLost(error)) throw error
        await sleep(backoffMs(attempt, STORE_ERROR_BACKOFF_MS))
      }
    }
  }

  /** One tick's settlements, with the claim the worker wants carried, in one store call. */
  private async flush(settlements: readonly Settlement[]): Promise<SettleResult[]> {
    const claim = this.claimToCarry(this.settling.size - settlements.length)
    if (claim === null) return (await this.store.settle({ settlements })).settled
    const sentAt = monotonicMs()
    try {
      const { settled, claimed } = await this.store.settle({ settlements, claim: claim.params })
      claim.claimed(claimed, sentAt)
      return settled
    } finally {
      claim.done()
    }
  }
}

/**
 * Jobs whose record a write found locked, until a write about them succeeds: 'seen' after the
 * first, 'reported' once said as a worker error. The first is not reported: this worker's own
 * renewal and settlement of one job, on two connections, lock its row for a statement each.
 */
export class LockedRows {
  private readonly jobs = new Map<string, 'seen' | 'reported'>()

  constructor(private readonly report: (error: JobLockedError) => void) {}

  /** A write (`what`: 'outcome', 'lease renewal') about this job found its row locked. */
  found(id: string, what: string): void {
    const state = this.jobs.get(id)
    if (state === 'reported') return
    this.jobs.set(id, state === undefined ? 'seen' : 'reported')
    // Found locked again before any write succeeded: the lock is held outside Ferry.
    if (state === 'seen') this.report(new JobLockedError(id, what))
  }

  /** A write about this job succeeded. */
  written(id: string): void {
    this.jobs.delete(id)
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
