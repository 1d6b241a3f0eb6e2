import type { EventEmitter } from 'node:events'
import type { BackoffOptions } from '../core/backoff.js'
import type { ClaimedJob, JobError } from '../core/job.js'
import { giveBack, type Settlement } from '../core/outcome.js'
import type { SettleResult, Store, WorkerJob } from '../store/store.js'
import type { ThroughputTally } from './throughput-tally.js'
import type { Completer, LockedRows } from './completer.js'
import {
  AttemptAbort,
  type AttemptReport,
  type ExecutionOutcome,
  type Executor,
} from './executors/executor.js'
import { JobReports } from './job-reports.js'
import { LeaseKeeper } from './lease-keeper.js'
import { decideSettlement, type AbortCause } from './retry-policy.js'
import type { WorkerCounts, WorkerEvents } from './worker-events.js'
import { monotonicMs } from '../core/monotonic.js'
import type { AttemptSpan, AttemptSpans } from '../tracing/attempt-spans.js'

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
  /** A span per attempt (docs/tracing.md); null when tracing is off. */
  spans: AttemptSpans | null
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
  /** Counts the outcomes the store took, per minute and queue, for the worker's heartbeat. */
  tally: ThroughputTally
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
  /** The attempt's span, ended with its outcome; null when tracing is off. */
  span: AttemptSpan | null
}

/** A held job handed to the executor to start when a running one ends (Executor.runNext), until it starts. */
interface HandedOver {
  abort: AttemptAbort
  recall: AttemptAbort
  /** Why the worker aborted it before it started (its lease was lost, a hard stop). */
  cause: AbortCause | null
  /** Once it started. */
  running: Running | null
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
  /**
   * Held jobs (still in `held`, in their place) also handed to the executor, which starts each the
   * moment a running job ends: under threads and processes a busy child has it before the outcome
   * it waits behind is even sent, so the two outcomes arrive together and share a commit.
   */
  private readonly handedOver = new Map<string, HandedOver>()
  /** Jobs handed over that started, whose predecessor's outcome is still to come: it waits for theirs. */
  private followersStarted = 0
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
  /** What running handlers reported, until a renewal or their settlement carries it. */
  private readonly reports: JobReports

  constructor(options: JobSlotsOptions) {
    this.options = options
    this.reports = new JobReports(() => this.leaseKeeper.renewSoon())
    this.leaseKeeper = new LeaseKeeper({
      store: options.store,
      leaseMs: options.leaseMs,
      leases: () =>
        this.leasedJobs().map((job) => ({
          id: job.id,
          leaseToken: job.leaseToken,
          report: this.reports.forRenewal(job.id),
        })),
      onLost: (id) => this.leaseLost(id),
      onRenewed: (id, sentAt) => {
        this.reports.renewed(id)
        this.leaseSince.set(id, sentAt)
        options.locks.written(id)
      },
      onLocked: (id) => options.locks.found(id, 'lease renewal'),
      onError: options.onStoreError,
    })
  }

  /** Up to `limit` of the jobs running now, each with when it started (epoch ms): the worker's record lists them. */
  runningJobs(limit: number): WorkerJob[] {
    const jobs: WorkerJob[] = []
    const epochOffset = Date.now() - monotonicMs()
    for (const { job, startedAt } of this.running.values()) {
      if (jobs.length === limit) break
      jobs.push({
        id: job.id,
        queue: job.queue,
        name: job.name,
        startedAt: Math.round(startedAt + epochOffset),
      })
    }
    return jobs
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

  /** Held jobs handed to the executor that it has neither started nor given back yet. */
  get handedOverCount(): number {
    return this.handedOver.size
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
      this.handOver()
    }
  }

  /** Aborts every running attempt: settled as snoozed until now, attempt unused. Held jobs handed over do not start. */
  abortAll(): void {
    for (const id of [...this.running.keys()]) this.abortJob(id, 'shutdown')
    for (const handed of this.handedOver.values()) {
      handed.cause ??= 'shutdown'
      handed.abort.abort(new Error('aborted: shutdown'))
    }
  }

  /** The worker stops: held jobs handed over that have not started stay held, and are given back. */
  recallHandedOver(): void {
    for (const handed of this.handedOver.values()) handed.recall.abort(new Error('the worker is stopping'))
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
          this.lost(job)
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
    const entry = this.begin(job, new AttemptAbort())
    const { executor } = this.options
    const run = (): Promise<ExecutionOutcome> =>
      executor.run({ job, abort: entry.abort, report: this.reporterFor(job) })
    // Inline, the handler starts within run(): inside the span's context, its own spans nest under it.
    ;(entry.span === null ? run() : entry.span.run(run)).then(
      (outcome) => this.settle(entry, outcome),
      (error: unknown) => this.settle(entry, { kind: 'failed', error: toExecutorError(error) }),
    )
    this.handOver()
  }

  /** Where its handler's reports go: buffered while this claim of it runs, dropped after. */
  private reporterFor(job: ClaimedJob): AttemptReport {
    return this.reports.reporterFor(job, () => this.running.get(job.id)?.job === job)
  }

  /** A job starts running in a slot: counted, announced, timed. */
  private begin(job: ClaimedJob, abort: AttemptAbort): Running {
    const timeoutMs = job.timeoutMs ?? this.options.defaultTimeoutMs
    const span = this.options.spans?.start(job) ?? null
    const entry: Running = { job, abort, cause: null, timeoutMs, timer: null, startedAt: monotonicMs(), span }
    this.running.set(job.id, entry)
    this.counts.claimed++
    this.leaseKeeper.start()
    this.options.emit('job:claimed', job)
    if (timeoutMs !== null) entry.timer = setTimeout(() => this.abortJob(job.id, 'timeout'), timeoutMs)
    return entry
  }

  /**
   * Hands held jobs, oldest first, to an executor that can queue them behind running ones
   * (Executor.runNext), while it has room: each then starts the moment a running job ends, and
   * reaches its child while the worker is still busy with the last commit. Only a job whose lease
   * is fresh, and which may start no later than a job started here would (`startBy`).
   */
  private handOver(): void {
    const { executor, leaseMs } = this.options
    if (executor.runNext === undefined) return
    for (const job of this.held) {
      if (this.handedOver.has(job.id)) continue
      if (this.options.stopping() || !this.leaseIsFresh(job)) return
      const handed: HandedOver = {
        abort: new AttemptAbort(),
        recall: new AttemptAbort(),
        cause: null,
        running: null,
      }
      const outcome = executor.runNext({
        job,
        abort: handed.abort,
        report: this.reporterFor(job),
        recall: handed.recall,
        startBy: this.leaseSince.get(job.id)! + leaseMs / 2,
        onStart: () => this.startedHandedOver(job, handed),
      })
      if (outcome === null) return
      this.handedOver.set(job.id, handed)
      outcome.then(
        (result) => this.handedOverEnded(job, handed, result),
        (error: unknown) =>
          this.handedOverEnded(job, handed, { kind: 'failed', error: toExecutorError(error) }),
      )
    }
  }

  /** A job handed over started, as the one before it in its child ended: it takes that one's slot. */
  private startedHandedOver(job: ClaimedJob, handed: HandedOver): void {
    this.handedOver.delete(job.id)
    this.held.splice(this.held.indexOf(job), 1)
    this.followersStarted++
    handed.running = this.begin(job, handed.abort)
    handed.running.cause = handed.cause
  }

  /** A job handed over ended: settled if it started, else held again (or dropped, its lease lost). */
  private handedOverEnded(job: ClaimedJob, handed: HandedOver, outcome: ExecutionOutcome | null): void {
    if (outcome !== null) {
      if (handed.running === null) this.startedHandedOver(job, handed)
      this.settle(handed.running!, outcome)
      return
    }
    this.handedOver.delete(job.id)
    if (handed.cause === 'lease-lost') {
      this.held.splice(this.held.indexOf(job), 1)
      this.lost(job)
      this.stopKeeperWhenNoLeases()
    }
    // Back to waiting in its place: a slot that freed meanwhile (its child died, or fell idle and
    // asked for it) takes it now; a stopping worker gives it back.
    this.slotFreed()
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
    // A job handed over that started as this one ended has taken its slot, and ends soon.
    const followed = this.followersStarted > 0
    if (followed) this.followersStarted--
    this.options.onJobRan(monotonicMs() - entry.startedAt)
    const { job, cause: abortCause, timeoutMs } = entry
    const decided = decideSettlement(
      { job, outcome, abortCause, timeoutMs },
      { now: Date.now(), backoff: this.options.backoff },
    )
    this.running.delete(job.id)
    entry.span?.end(decided)
    // What the handler reported since the last renewal is written with its outcome.
    const report = this.reports.forSettlement(job.id)
    const settlement = decided === null || report === undefined ? decided : { ...decided, report }
    if (settlement === null) {
      this.lost(job)
      this.slotFreed()
      this.stopKeeperWhenNoLeases()
      return
    }
    const written = this.options.completer.settle(
      job,
      settlement,
      followed ? OUTCOME_HOLD_MS : this.outcomeHoldMs(),
    )
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
        this.options.tally.add(job.queue, 'completed')
        emit('job:completed', job, settlement.result)
        break
      case 'retry':
        this.counts.failed++
        this.options.tally.add(job.queue, 'failed')
        emit('job:failed', job, settlement.error, settlement.runAt)
        break
      case 'dead':
        this.counts.dead++
        this.options.tally.add(job.queue, 'failed')
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
    const next = this.nextHeld()
    return next === undefined || this.busyCount >= this.options.concurrency || !this.leaseIsFresh(next)
      ? 0
      : OUTCOME_HOLD_MS
  }

  /** The held job a free slot takes next: the oldest not handed over, none while stopping. */
  private nextHeld(): ClaimedJob | undefined {
    if (this.options.stopping()) return undefined
    return this.handedOver.size === 0 ? this.held[0] : this.held.find((job) => !this.handedOver.has(job.id))
  }

  /**
   * A job's handler ended (or a job handed over came back unstarted): a free slot takes the next
   * held job, or the claim loop may use it. A job handed over may have taken the slot already.
   */
  private slotFreed(): void {
    this.options.onJobEnded()
    if (this.busyCount < this.options.concurrency) {
      const next = this.nextHeld()
      if (next === undefined) {
        this.options.onRoom()
        return
      }
      this.held.splice(this.held.indexOf(next), 1)
      this.startJob(next)
    }
    this.handOver()
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
    const handed = this.handedOver.get(id)
    if (handed !== undefined) {
      // Dropped once the executor gives it back; aborted, as a running one, if it started meanwhile.
      handed.cause = 'lease-lost'
      handed.abort.abort(new Error('aborted: lease-lost'))
      return
    }
    const at = this.held.findIndex((job) => job.id === id)
    if (at === -1) {
      this.abortJob(id, 'lease-lost')
      return
    }
    this.lost(this.held.splice(at, 1)[0]!)
    this.stopKeeperWhenNoLeases()
  }

  /** The job's lease is no longer this worker's, and the job did not run (or its outcome cannot be written). */
  private lost(job: ClaimedJob): void {
    this.forget(job.id)
    this.reports.forget(job.id)
    this.counts.leaseLost++
    this.options.emit('job:lease-lost', job)
  }
}

function toExecutorError(error: unknown): JobError {
  return {
    kind: 'crash',
    message: `the executor failed: ${error instanceof Error ? error.message : String(error)}`,
  }
}
