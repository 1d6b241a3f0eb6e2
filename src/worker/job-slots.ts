import type { EventEmitter } from 'node:events'
import type { BackoffOptions } from '../core/backoff.js'
import type { ClaimedJob, JobError } from '../core/job.js'
import { giveBack, type Settlement } from '../core/outcome.js'
import type { SettleResult, Store } from '../store/store.js'
import type { Completer, LockedRows } from './completer.js'
import { AttemptAbort, type ExecutionOutcome, type Executor } from './executors/executor.js'
import { LeaseKeeper } from './lease-keeper.js'
import { decideSettlement, type AbortCause } from './retry-policy.js'
import type { WorkerCounts, WorkerEvents } from './worker-events.js'
import { monotonicMs } from '../core/monotonic.js'

/**
 * How long an outcome may wait for the outcome of the next job of its slot, which started as it
 * ended, so that both share a commit: a commit costs about that (an fsync on SQLite 'full', a
 * round trip on the servers), and a short job ends well within it. Inline, a short job's next one
 * ends in the same tick and shares its commit anyway; isolated, its outcome comes back a message
 * later, and 2,000 no-op jobs at concurrency 1 under processes took a commit each, against one
 * per two inline (bench isolation-cost; strace counted the fsyncs). A longer job only delays the
 * outcome before it by this much, written while it runs.
 */
export const OUTCOME_HOLD_MS = 1

export interface JobSlotsOptions {
  store: Store
  executor: Executor
  completer: Completer
  locks: LockedRows
  /** Jobs run at once. */
  concurrency: number
  leaseMs: number
  defaultTimeoutMs: number | null
  backoff: BackoffOptions | undefined
  emit: EventEmitter<WorkerEvents>['emit']
  /** The worker is stopping: no held job starts any more. */
  stopping: () => boolean
  /** A job's handler ended, before its slot is used again (the worker checks its memory limit). */
  onJobEnded: () => void
  /** A job's handler ran this long (ms, from its start to its outcome): the worker's prefetch learns from it. */
  onJobRan: (ms: number) => void
  /** A slot or a lease was freed and no held job took it: the claim loop may have room. */
  onRoom: () => void
  onStoreError: (error: unknown) => void
}

/** A job whose handler runs, from its claim until its outcome is decided. */
interface Running {
  job: ClaimedJob
  abort: AttemptAbort
  cause: AbortCause | null
  timeoutMs: number | null
  timer: NodeJS.Timeout | null
  /** monotonicMs() as the handler started. */
  startedAt: number
}

/**
 * The jobs a worker holds, from their claim until the store has their outcome: running in one of
 * `concurrency` slots, held ahead for the next free slot (prefetch), renewed before they start, or
 * being settled (the completer's). It keeps all their leases (the lease keeper), times attempts out,
 * aborts them, and turns each outcome into a settlement through the retry policy.
 */
export class JobSlots {
  readonly counts: WorkerCounts = { claimed: 0, completed: 0, failed: 0, dead: 0, snoozed: 0, leaseLost: 0 }

  private readonly options: JobSlotsOptions
  private readonly running = new Map<string, Running>()
  /** Claimed ahead (prefetch), waiting for a free slot, in claim order. */
  private readonly held: ClaimedJob[] = []
  /** Held past half their lease (a freeze, a stall): being renewed before they start, each in a slot. */
  private readonly confirming = new Map<string, ClaimedJob>()
  /**
   * When each lease this worker holds was last granted or renewed: the monotonicMs() at which
   * the call that did it was sent (the store read its clock after that). A job starts only while
   * this is recent; else its lease is renewed first, so a worker that froze with a claim's answer
   * unread never starts a job the store already gave to another.
   */
  private readonly leaseSince = new Map<string, number>()
  private readonly leaseKeeper: LeaseKeeper

  constructor(options: JobSlotsOptions) {
    this.options = options
    this.leaseKeeper = new LeaseKeeper({
      store: options.store,
      leaseMs: options.leaseMs,
      leases: () => this.leasedJobs().map((job) => ({ id: job.id, leaseToken: job.leaseToken })),
      onLost: (id) => this.leaseLost(id),
      onRenewed: (id, sentAt) => {
        this.leaseSince.set(id, sentAt)
        options.locks.written(id)
      },
      onLocked: (id) => options.locks.found(id, 'lease renewal'),
      onError: options.onStoreError,
    })
  }

  /** Jobs running now. */
  get runningCount(): number {
    return this.running.size
  }

  /** Slots in use: jobs running, and jobs whose lease is being renewed before they start. */
  get busyCount(): number {
    return this.running.size + this.confirming.size
  }

  /** Jobs claimed ahead, waiting for a slot. */
  get heldCount(): number {
    return this.held.length
  }

  /**
   * A claimed job (its lease granted by a call sent at `leasedAt`) runs now if a slot is free, else
   * waits in `held` for one.
   */
  take(job: ClaimedJob, leasedAt: number): void {
    this.leaseSince.set(job.id, leasedAt)
    if (this.busyCount < this.options.concurrency && !this.options.stopping()) {
      this.startJob(job)
    } else {
      this.held.push(job)
      this.leaseKeeper.start()
    }
  }

  /** Aborts every running attempt: settled as snoozed until now, attempt unused. */
  abortAll(): void {
    for (const id of [...this.running.keys()]) this.abortJob(id, 'shutdown')
  }

  /**
   * Once nothing runs and every outcome is written: gives back the jobs held ahead (in their place
   * in line, attempt unused) and stops renewing leases.
   */
  async close(): Promise<void> {
    const held = this.held.splice(0)
    for (const job of held) this.forget(job.id)
    if (held.length > 0) {
      try {
        await this.options.store.settle({ settlements: held.map(giveBack) })
      } catch (error) {
        // Their leases run out and they are recovered, with the attempt counted.
        this.options.onStoreError(error)
      }
    }
    this.leaseKeeper.stop()
  }

  /** Every job this worker holds a lease on: running, held ahead, about to start, or being settled. */
  private leasedJobs(): ClaimedJob[] {
    return [
      ...[...this.running.values()].map(({ job }) => job),
      ...this.held,
      ...this.confirming.values(),
      ...this.options.completer.jobs,
    ]
  }

  /**
   * Runs a job in a free slot, if this worker surely still holds its lease: granted or renewed
   * less than half a lease ago (by this host's monotonic clock, which a frozen process's also
   * counts). Else, the lease is renewed first (fenced by its token) and the job runs only if that
   * succeeded.
   */
  private startJob(job: ClaimedJob): void {
    const { leaseMs } = this.options
    if (this.leaseIsFresh(job)) {
      this.execute(job)
      return
    }
    this.confirming.set(job.id, job)
    this.leaseKeeper.start()
    const sentAt = monotonicMs()
    this.options.store.renew({ leases: [{ id: job.id, leaseToken: job.leaseToken }], leaseMs }).then(
      ([result]) => {
        this.confirming.delete(job.id)
        if (result !== 'ok') {
          this.forget(job.id)
          this.counts.leaseLost++
          this.options.emit('job:lease-lost', job)
          this.slotFreed()
        } else if (this.options.stopping()) {
          // Stopping: it goes back in line with the held ones.
          this.held.push(job)
          this.slotFreed()
        } else {
          this.leaseSince.set(job.id, sentAt)
          this.execute(job)
        }
        this.stopKeeperWhenNoLeases()
      },
      (error: unknown) => {
        // Not renewed: left to its lease, which runs out, and to recovery.
        this.confirming.delete(job.id)
        this.forget(job.id)
        this.options.onStoreError(error)
        this.slotFreed()
        this.stopKeeperWhenNoLeases()
      },
    )
  }

  /** Its lease was granted or renewed less than half a lease ago: it may start without a renewal. */
  private leaseIsFresh(job: ClaimedJob): boolean {
    return monotonicMs() - (this.leaseSince.get(job.id) ?? -Infinity) <= this.options.leaseMs / 2
  }

  /** The worker no longer holds this job's lease. */
  private forget(id: string): void {
    this.leaseSince.delete(id)
  }

  private execute(job: ClaimedJob): void {
    const timeoutMs = job.timeoutMs ?? this.options.defaultTimeoutMs
    const entry: Running = {
      job,
      abort: new AttemptAbort(),
      cause: null,
      timeoutMs,
      timer: null,
      startedAt: monotonicMs(),
    }
    this.running.set(job.id, entry)
    this.counts.claimed++
    this.leaseKeeper.start()
    this.options.emit('job:claimed', job)
    if (timeoutMs !== null) entry.timer = setTimeout(() => this.abortJob(job.id, 'timeout'), timeoutMs)
    this.options.executor.run({ job, abort: entry.abort }).then(
      (outcome) => this.settle(entry, outcome),
      (error: unknown) => this.settle(entry, { kind: 'failed', error: toExecutorError(error) }),
    )
  }

  private abortJob(id: string, cause: AbortCause): void {
    const entry = this.running.get(id)
    if (entry === undefined || entry.cause !== null) return
    entry.cause = cause
    entry.abort.abort(
      cause === 'timeout'
        ? new Error(`timed out after ${entry.timeoutMs} ms`)
        : new Error(`aborted: ${cause}`),
    )
  }

  /**
   * Turns an attempt's outcome into a settlement (the retry policy) and has the completer write
   * it. The slot is free as soon as the outcome is known; the lease is kept until the store has it.
   */
  private settle(entry: Running, outcome: ExecutionOutcome): void {
    if (entry.timer !== null) clearTimeout(entry.timer)
    this.options.onJobRan(monotonicMs() - entry.startedAt)
    const { job, cause: abortCause, timeoutMs } = entry
    const settlement = decideSettlement(
      { job, outcome, abortCause, timeoutMs },
      { now: Date.now(), backoff: this.options.backoff },
    )
    this.running.delete(job.id)
    if (settlement === null) {
      this.forget(job.id)
      this.counts.leaseLost++
      this.options.emit('job:lease-lost', job)
      this.slotFreed()
      this.stopKeeperWhenNoLeases()
      return
    }
    const written = this.options.completer.settle(job, settlement, this.outcomeHoldMs())
    this.slotFreed()
    written.then(
      (result) => {
        this.report(job, settlement, result)
        this.settled(job)
      },
      (error: unknown) => {
        // The store stayed unreachable: the lease runs out and the job runs again.
        this.options.onStoreError(error)
        this.settled(job)
      },
    )
  }

  private report(job: ClaimedJob, settlement: Settlement, result: SettleResult): void {
    const { emit } = this.options
    // Given up on while its row stayed locked: the lease decides what happens to it.
    if (result === 'locked') return
    if (result === 'lease_lost') {
      this.counts.leaseLost++
      emit('job:lease-lost', job)
      return
    }
    switch (settlement.kind) {
      case 'completed':
        this.counts.completed++
        emit('job:completed', job, settlement.result)
        break
      case 'retry':
        this.counts.failed++
        emit('job:failed', job, settlement.error, settlement.runAt)
        break
      case 'dead':
        this.counts.dead++
        emit('job:dead', job, settlement.error)
        break
      case 'snoozed':
        this.counts.snoozed++
        emit('job:snoozed', job, settlement.runAt)
        break
    }
  }

  /**
   * How long the outcome of a job that just ended may wait for the next one's (OUTCOME_HOLD_MS):
   * while a held job is about to start in its slot at once. Nothing waits behind a slot that
   * frees without a next job: the claim loop, or the room it leaves, needs the outcome written.
   */
  private outcomeHoldMs(): number {
    const next = this.held[0]
    return next === undefined || this.options.stopping() || !this.leaseIsFresh(next) ? 0 : OUTCOME_HOLD_MS
  }

  /** A job's handler ended: its slot takes the next held job, or the claim loop may use it. */
  private slotFreed(): void {
    this.options.onJobEnded()
    const next = this.options.stopping() ? undefined : this.held.shift()
    if (next !== undefined) this.startJob(next)
    else this.options.onRoom()
  }

  /** The store has the job's outcome (or gave up on it): the worker holds its lease no longer. */
  private settled(job: ClaimedJob): void {
    this.forget(job.id)
    this.stopKeeperWhenNoLeases()
    this.options.onRoom()
  }

  private stopKeeperWhenNoLeases(): void {
    if (this.leasedJobs().length === 0) this.leaseKeeper.stop()
  }

  /** The lease keeper found a lease gone: a running job is aborted, a held one dropped. */
  private leaseLost(id: string): void {
    const at = this.held.findIndex((job) => job.id === id)
    if (at === -1) {
      this.abortJob(id, 'lease-lost')
      return
    }
    const [job] = this.held.splice(at, 1)
    this.forget(job!.id)
    this.counts.leaseLost++
    this.options.emit('job:lease-lost', job!)
    this.stopKeeperWhenNoLeases()
  }
}

function toExecutorError(error: unknown): JobError {
  return {
    kind: 'crash',
    message: `the executor failed: ${error instanceof Error ? error.message : String(error)}`,
  }
}
