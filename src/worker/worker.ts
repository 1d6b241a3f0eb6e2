import { publishJobEvents } from '../store/events/publish-events.js'
import { EventEmitter } from 'node:events'
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { backoffMs } from '../core/backoff.js'
import { isStoreLost, ValidationError } from '../core/errors.js'
import type { ClaimedJob } from '../core/job.js'
import { assertKnownKeys, optionKeys } from '../core/option-keys.js'
import type { RecoverResult, SettleResult, Store, WakeReason } from '../store/store.js'
import { Completer, LockedRows, STORE_ERROR_BACKOFF_MS, type CarriedClaim } from './completer.js'
import type { Executor } from './executors/executor.js'
import { JobSlots } from './job-slots.js'
import { Prefetch, type PrefetchSetting } from './prefetch.js'
import { Scheduler } from '../scheduler/scheduler.js'
import { Recoverer } from './recoverer.js'
import { RetentionSweeper, type RetentionSweep } from './retention-sweeper.js'
import { ThroughputTally } from './throughput-tally.js'
import { WorkerHeartbeat } from './worker-heartbeat.js'
import { WORKER_JOBS_MAX } from '../store/kernel/workers.js'
import type { StopReason, WorkerCounts, WorkerEvents } from './worker-events.js'
import { workerExecutor, workerSettings, type WorkerOptions } from './worker-options.js'
import { AttemptSpans } from '../tracing/attempt-spans.js'
import { openTracing } from '../tracing/open-tracing.js'
import { monotonicMs } from '../core/monotonic.js'

export type { WorkerOptions } from './worker-options.js'
export type { StopReason, WorkerCounts, WorkerEvents } from './worker-events.js'

/** How Worker.stop stops. */
export interface StopOptions {
  /** False aborts running jobs (put back to ready without using an attempt). Default true. */
  graceful?: boolean
}

const STOP_OPTION_KEYS = optionKeys<StopOptions>({ graceful: true })

const STOP_CHECK_INTERVAL_MS = 1000

/**
 * Claims jobs from its queues, runs them under an executor and settles their outcomes.
 *
 * The loop: claim up to the free capacity in one store call; when the queues are drained, sleep in
 * store.waitForWork (no polling) until an enqueue, a due job, a stop request or stop(). Outcomes
 * of one tick are settled in one store call (the completer); leases of running jobs are renewed
 * in one call every third of the lease (the lease keeper); expired leases of dead workers are
 * swept periodically (the recoverer). What an attempt's outcome becomes is the retry policy's.
 */
export class Worker extends EventEmitter<WorkerEvents> {
  readonly workerId: string
  readonly queues: readonly string[]
  readonly concurrency: number

  private readonly store: Store
  private readonly executor: Executor
  private readonly leaseMs: number
  private readonly options: WorkerOptions
  private readonly lockedRows = new LockedRows((error) => this.emit('worker:error', error))
  /** Jobs asked for by claims in flight: they count against the room for more. */
  private claimsInFlight = 0
  /**
   * The job names this worker claims and waits for: those its executor has handlers for, known
   * once it started. Jobs of other names stay in line for the workers that know them, their
   * attempts unused, so workers with different handlers can share a queue (a rolling deploy
   * that adds a job type, a worker per kind of job).
   */
  private names: readonly string[] = []
  private readonly completer: Completer
  private readonly slots: JobSlots
  private readonly recoverer: Recoverer
  /** Fires the store's schedules; null with `scheduler: false`. */
  private readonly scheduler: Scheduler | null
  /** Deletes finished jobs past their retention: started unless `retention: false`. */
  private readonly retention: RetentionSweeper
  /** Writes this worker's record and its throughput to the store every heartbeatMs. */
  private readonly heartbeat: WorkerHeartbeat
  /** How many jobs to hold ahead of the free slots, now. */
  private readonly prefetcher: Prefetch
  /** Ends the loop's current wait (for capacity or a pause) when it must look again. */
  private wakeLoop: (() => void) | null = null
  private waitingForCapacity = false
  /** Aborts the loop's current waitForWork when it must look again (stop). */
  private workWait: AbortController | null = null
  private loop: Promise<void> | null = null
  private starting = false
  /** When start() was called (epoch ms), for the worker's record. */
  private startedAt = 0
  private stopReason: StopReason | null = null
  private hardStop = false
  /** The store's last stop request when this worker started: a later one is meant for it. Compared
   * with what the store returns, never with this host's clock, which may disagree with the store's. */
  private stopRequestAtStart: number | null = null
  private lastStopCheckAt = 0
  private timeLimitTimer: NodeJS.Timeout | null = null
  private stoppedPromise: Promise<StopReason>
  private resolveStopped!: (reason: StopReason) => void
  private lostStoreError: unknown = null

  constructor(options: WorkerOptions) {
    super()
    const { queues, concurrency, prefetch, leaseMs, schedules } = workerSettings(options)
    // Every job this worker moves is told to the store's event subscribers (docs/events.md).
    const store = publishJobEvents(options.store)
    this.options = options
    this.store = store
    this.queues = queues
    this.concurrency = concurrency
    this.prefetcher = new Prefetch(prefetch, concurrency)
    this.leaseMs = leaseMs
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`
    this.executor = workerExecutor(options, concurrency)
    this.completer = new Completer({
      store,
      // With jobs held ahead, the next flush may go while one is in flight: the worker keeps
      // running jobs meanwhile, so two batches of outcomes can be on their way.
      maxInFlight: prefetch === 0 ? 1 : 2,
      claimToCarry: (othersSettling) => this.claimToCarry(othersSettling),
      locks: this.lockedRows,
      onStoreError: (error) => this.storeError(error),
    })
    const tally = new ThroughputTally()
    const tracing = openTracing(options.tracing, 'tracing')
    this.slots = new JobSlots({
      store,
      executor: this.executor,
      spans: tracing === null ? null : new AttemptSpans(tracing),
      completer: this.completer,
      locks: this.lockedRows,
      concurrency,
      leaseMs,
      defaultTimeoutMs: options.defaultTimeoutMs ?? null,
      backoff: options.backoff,
      emit: this.emit.bind(this),
      stopping: () => this.stopReason !== null,
      // The memory limit is checked after each job, before its slot is used again.
      onJobEnded: () => this.checkMemory(),
      onJobRan: (ms) => this.prefetcher.jobRan(ms),
      // Only a loop waiting for room needs waking; one waiting for work has room already.
      onRoom: () => {
        if (this.waitingForCapacity) this.interruptWait()
      },
      onStoreError: (error) => this.storeError(error),
      tally,
    })
    const host = hostname()
    this.heartbeat = new WorkerHeartbeat({
      store,
      intervalMs: options.heartbeatMs ?? 5000,
      info: () => ({
        workerId: this.workerId,
        host,
        pid: process.pid,
        queues: [...queues],
        concurrency,
        strategy: this.executor.strategy,
        startedAt: this.startedAt,
        jobs: this.slots.runningJobs(WORKER_JOBS_MAX),
        activeCount: this.slots.runningCount,
      }),
      tally,
      onError: (error) => this.storeError(error),
    })
    this.recoverer = new Recoverer({
      store,
      leaseMs,
      intervalMs: options.recoverIntervalMs ?? Math.min(Math.round(leaseMs / 3), 10_000),
      onDone: (result) => this.emit('recover:done', result),
      onError: (error) => this.storeError(error),
    })
    this.scheduler =
      schedules === null
        ? null
        : new Scheduler({
            store,
            schedules,
            onFired: (fire) => this.emit('schedule:fired', fire),
            onError: (error) => this.storeError(error),
          })
    this.retention = new RetentionSweeper({
      store,
      intervalMs: options.retentionIntervalMs ?? 60_000,
      onDone: (sweep) => this.emit('retention:done', sweep),
      onError: (error) => this.storeError(error),
    })
    this.stoppedPromise = new Promise((resolve) => (this.resolveStopped = resolve))
  }

  /** The job names this worker can run, and the only ones it claims (known once started). */
  get jobNames(): ReadonlySet<string> {
    return this.executor.jobNames
  }

  /** What the worker was asked to hold ahead: a number, or 'auto'. */
  get prefetch(): PrefetchSetting {
    return this.prefetcher.setting
  }

  /** Jobs running now. */
  get activeCount(): number {
    return this.slots.runningCount
  }

  /** Jobs claimed, completed, failed… since the worker started. */
  get counts(): WorkerCounts {
    return this.slots.counts
  }

  /** Resolves with the reason once the worker has stopped and settled everything. */
  get stopped(): Promise<StopReason> {
    return this.stoppedPromise
  }

  /** Why the store is gone, when the worker stopped for 'store-lost'; else null. */
  get stopError(): unknown {
    return this.lostStoreError
  }

  /**
   * Loads handlers and starts the executor (once, before any claim), then starts claiming.
   * Resolves when the worker is running; `stopped` resolves when it has stopped.
   */
  async start(): Promise<void> {
    if (this.starting) throw new ValidationError('invalid_option', 'start', 'the worker is already started')
    this.starting = true
    this.startedAt = Date.now()
    await this.executor.start()
    this.names = [...this.executor.jobNames]
    if (this.names.length === 0) {
      await this.executor.close()
      throw new ValidationError(
        'invalid_option',
        'handlers',
        'the executor has no handlers: it could run no job',
      )
    }
    const control = await this.store.control()
    this.stopRequestAtStart = control.stopRequestedAt
    this.lastStopCheckAt = monotonicMs()
    try {
      await this.scheduler?.start()
    } catch (error) {
      await this.executor.close()
      throw error
    }
    // Listed from the start: before the first claim, not a heartbeat later.
    await this.heartbeat.start()
    if (this.stopReason !== null) {
      // stop() came while starting: it already resolved `stopped`; run nothing.
      await this.heartbeat.stopAndRemove({ storeLost: this.lostStoreError !== null })
      await this.executor.close()
      return
    }
    if (this.options.timeLimitMs !== undefined) {
      this.timeLimitTimer = setTimeout(() => this.beginStop('time-limit'), this.options.timeLimitMs)
    }
    this.recoverer.start()
    if (this.options.retention !== false) this.retention.start()
    this.loop = this.run()
    this.emit('worker:started')
  }

  /**
   * Stops claiming and waits for running jobs to finish and be settled. With `{ graceful: false }`
   * (a second Ctrl-C), running jobs are aborted and put back to ready without using an attempt.
   */
  async stop(options: StopOptions = {}): Promise<StopReason> {
    assertKnownKeys(options, STOP_OPTION_KEYS, '')
    const { graceful = true } = options
    if (!graceful) this.abortRunning()
    this.beginStop('requested')
    if (this.loop === null) {
      this.resolveStopped(this.stopReason!)
    }
    return this.stoppedPromise
  }

  /** Runs one recovery sweep now (tests, and `ferry` maintenance). */
  recoverOnce(): Promise<RecoverResult> {
    return this.recoverer.runOnce()
  }

  /** Runs one retention sweep now, whether or not the worker sweeps by itself (tests, benchmarks). */
  pruneOnce(): Promise<RetentionSweep> {
    return this.retention.runOnce()
  }

  // ── the loop ───────────────────────────────────────────────────────────────────────────────

  private async run(): Promise<void> {
    let storeFailures = 0
    // The last wait was handed fewer jobs than it asked for: the store had no more, so wait again
    // without a claim (the wait looks at the queues first anyway).
    let drained = false
    while (this.stopReason === null) {
      try {
        await this.checkStopRequest(false)
      } catch (error) {
        this.storeError(error)
      }
      if (this.stopReason !== null) break
      if (this.jobLimitReached()) {
        this.beginStop('job-limit')
        break
      }
      const limit = this.claimLimit()
      // Outcomes about to be written carry the claim for the room they left (settle with a claim):
      // one store call instead of two.
      if (limit <= 0 || this.completer.hasPending) {
        await this.waitForCapacity()
        continue
      }
      if (!drained) {
        let jobs: ClaimedJob[]
        this.claimsInFlight += limit
        const sentAt = monotonicMs()
        try {
          jobs = await this.store.claim({
            queues: this.queues,
            names: this.names,
            limit,
            leaseMs: this.leaseMs,
            workerId: this.workerId,
          })
          storeFailures = 0
        } catch (error) {
          this.storeError(error)
          await this.pause(backoffMs(++storeFailures, STORE_ERROR_BACKOFF_MS))
          continue
        } finally {
          this.claimsInFlight -= limit
        }
        for (const job of jobs) this.slots.take(job, sentAt)
        if (jobs.length === limit || this.stopReason !== null) continue
      }
      // The queues are drained: sleep until something happens.
      try {
        const room = this.claimLimit()
        const wake = await this.waitForWork(room)
        drained = wake.reason === 'delivered' && wake.jobs < room
        // A stop request also wakes waiters as 'notified', so look for one, but beside the next
        // claim rather than before it: awaiting it put a round trip (0.4–0.6 ms p50 on
        // PostgreSQL) on every wake-up. Jobs claimed meanwhile still run: the stop is graceful.
        if (wake.reason === 'notified') {
          this.checkStopRequest(true).catch((error: unknown) => this.storeError(error))
        }
      } catch (error) {
        drained = false
        this.storeError(error)
        await this.pause(backoffMs(++storeFailures, STORE_ERROR_BACKOFF_MS))
      }
    }
    await this.finish()
  }

  /**
   * Sleeps until something happens. On a store with delivery, an enqueue may claim up to `limit`
   * jobs for this worker meanwhile and hand them over with the wake-up: they start at once, with
   * no claim of the worker's own (capabilities.delivery). Says how many it was handed.
   */
  private async waitForWork(limit: number): Promise<{ reason: WakeReason | 'delivered'; jobs: number }> {
    const wait = new AbortController()
    this.workWait = wait
    try {
      if (!this.store.capabilities.delivery || limit <= 0) {
        const { reason } = await this.store.waitForWork({
          queues: this.queues,
          names: this.names,
          signal: wait.signal,
        })
        return { reason, jobs: 0 }
      }
      this.claimsInFlight += limit
      try {
        const claim = { limit, leaseMs: this.leaseMs, workerId: this.workerId }
        const { reason, jobs } = await this.store.waitForWork({
          queues: this.queues,
          names: this.names,
          signal: wait.signal,
          claim,
        })
        await this.takeDelivered(jobs)
        return { reason, jobs: jobs.length }
      } finally {
        this.claimsInFlight -= limit
      }
    } finally {
      this.workWait = null
    }
  }

  /**
   * Jobs an enqueue handed this worker hold a short delivery lease until it takes them, which it
   * does before it starts them: a job it took too long to take (it froze or stalled meanwhile) has
   * gone back in line, attempt unused, and must not run here.
   */
  private async takeDelivered(jobs: readonly ClaimedJob[]): Promise<void> {
    if (jobs.length === 0) return
    const sentAt = monotonicMs()
    let results: SettleResult[]
    try {
      results = await this.store.renew({
        leases: jobs.map((job) => ({ id: job.id, leaseToken: job.leaseToken })),
        leaseMs: this.leaseMs,
        delivered: true,
      })
    } catch (error) {
      // Not taken: their delivery leases run out and they go back in line, attempt unused.
      this.storeError(error)
      return
    }
    jobs.forEach((job, i) => {
      if (results[i] === 'ok') {
        this.slots.take(job, sentAt)
      } else {
        this.counts.leaseLost++
        this.emit('job:lease-lost', job)
      }
    })
  }

  /**
   * The claim the completer's next flush carries: when the loop waits for room, the room these
   * jobs left is filled in the same store call (settle with a claim), one commit instead of two.
   * The flush's own outcomes are written before its claim, so only other flushes' count.
   */
  private claimToCarry(othersSettling: number): CarriedClaim | null {
    const limit = this.waitingForCapacity && this.stopReason === null ? this.claimLimit(othersSettling) : 0
    if (limit <= 0) return null
    this.claimsInFlight += limit
    return {
      params: {
        queues: this.queues,
        names: this.names,
        limit,
        leaseMs: this.leaseMs,
        workerId: this.workerId,
      },
      claimed: (jobs, sentAt) => {
        for (const job of jobs) this.slots.take(job, sentAt)
      },
      done: () => {
        this.claimsInFlight -= limit
      },
    }
  }

  /**
   * How many jobs to claim now: the room left by running and held jobs, by claims in flight and by
   * jobs whose outcome is still on its way (`settling`), and no more than the job limit leaves. So
   * a worker never holds leases on more than concurrency + prefetch jobs, and a worker that dies
   * runs again at most that many that it had started (mostLeasedJobs).
   */
  private claimLimit(settling = this.completer.settlingCount): number {
    const pending = this.slots.heldCount + this.claimsInFlight
    const room = this.concurrency + this.prefetcher.jobsAhead() - this.slots.busyCount - pending - settling
    const { jobLimit } = this.options
    return jobLimit === undefined ? room : Math.min(room, jobLimit - this.counts.claimed - pending)
  }

  private jobLimitReached(): boolean {
    const { jobLimit } = this.options
    return jobLimit !== undefined && this.counts.claimed >= jobLimit
  }

  /** Waits until a job ends and leaves room (or the worker must stop). */
  private async waitForCapacity(): Promise<void> {
    this.waitingForCapacity = true
    await new Promise<void>((resolve) => (this.wakeLoop = resolve))
    // Let every job that ended in this tick free its slot, so one claim fills them all. Until
    // then the completer may still refill the slots in its own store call (claimToCarry).
    await new Promise((resolve) => setImmediate(resolve))
    this.waitingForCapacity = false
  }

  /** Sleeps, but wakes early for stop(). */
  private async pause(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms)
      this.wakeLoop = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }

  /** Ends whatever the loop is waiting for, so it looks again. */
  private interruptWait(): void {
    const wake = this.wakeLoop
    this.wakeLoop = null
    wake?.()
    this.workWait?.abort()
  }

  /** Asks the store whether an operator asked workers to stop: after a wake-up, or once a second. */
  private async checkStopRequest(force: boolean): Promise<void> {
    const now = monotonicMs()
    if (!force && now - this.lastStopCheckAt < STOP_CHECK_INTERVAL_MS) return
    this.lastStopCheckAt = now
    const { stopRequestedAt: requestedAt, schedulesVersion } = await this.store.control()
    if (requestedAt !== null && requestedAt !== this.stopRequestAtStart) this.beginStop('stop-workers')
    else this.scheduler?.sawVersion(schedulesVersion)
  }

  // ── stopping ───────────────────────────────────────────────────────────────────────────────

  /**
   * A store call failed: reported, and retried by its caller. When the store is gone for good, the
   * worker stops at once, aborting running jobs (their outcomes could not be written anyway).
   */
  private storeError(error: unknown): void {
    this.emit('worker:error', error)
    if (!isStoreLost(error) || this.lostStoreError !== null) return
    this.lostStoreError = error
    this.abortRunning()
    this.beginStop('store-lost')
  }

  private beginStop(reason: StopReason): void {
    if (this.stopReason !== null) return
    this.stopReason = reason
    this.emit('worker:stopping', reason)
    // A stopping worker fires no more slots; the other workers' schedulers fire them.
    void this.scheduler?.stop()
    // Nor does it start another batch: a long sweep must not hold the stop up.
    void this.retention.stop()
    this.slots.recallHandedOver()
    this.interruptWait()
  }

  private abortRunning(): void {
    this.hardStop = true
    this.slots.abortAll()
  }

  private checkMemory(): void {
    const limit = this.options.memoryLimitBytes
    if (limit !== undefined && process.memoryUsage.rss() > limit) this.beginStop('memory-limit')
  }

  /** After the loop: let running jobs end (or abort them on a hard stop), settle, release. */
  private async finish(): Promise<void> {
    if (this.timeLimitTimer !== null) clearTimeout(this.timeLimitTimer)
    // A job handed over to the executor either starts (and runs to its end) or comes back held.
    while (this.slots.busyCount > 0 || this.slots.handedOverCount > 0) {
      if (this.hardStop) this.abortRunning()
      await this.waitForCapacity()
    }
    await this.completer.finish(this.leaseMs)
    await this.slots.close()
    // Every outcome is counted by now: the last heartbeat sends them all.
    await this.heartbeat.stopAndRemove({ storeLost: this.lostStoreError !== null })
    await this.recoverer.stop()
    await this.retention.stop()
    await this.scheduler?.stop()
    await this.executor.close()
    const reason = this.stopReason ?? 'requested'
    this.emit('worker:stopped', reason)
    this.resolveStopped(reason)
  }
}
