import { EventEmitter } from 'node:events'
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { assertBackoffOptions, backoffMs, type BackoffOptions } from '../core/backoff.js'
import { isStoreLost, JobLockedError, ValidationError } from '../core/errors.js'
import type { ClaimedJob, JobError } from '../core/job.js'
import { giveBack, type Settlement } from '../core/outcome.js'
import { TickBatcher } from '../core/tick-batcher.js'
import {
  assertInteger,
  assertKnownKeys,
  assertQueueList,
  MAX_TIMEOUT_MS,
  optionKeys,
  serializePayload,
} from '../core/validate.js'
import type { RecoverResult, SettleResult, Store, WakeReason } from '../store/store.js'
import { AttemptAbort, type ExecutionOutcome, type Executor } from './executors/executor.js'
import { createExecutor } from './executors/create-executor.js'
import type { HandlerSource } from './handler-module.js'
import { LeaseKeeper } from './lease-keeper.js'
import { Recoverer } from './recoverer.js'

export interface WorkerOptions {
  store: Store
  /** Handlers, or the path/URL of a module whose default export maps job names to handlers. */
  handlers: HandlerSource
  /** Queues in strict priority order: a job of an earlier queue always goes first. Default ['default']. */
  queues?: string[]
  /** Jobs run at once. Default 10. */
  concurrency?: number
  /**
   * Jobs claimed ahead and held, beyond `concurrency`, so a slot that frees up starts its next job
   * at once instead of after a store round trip, and the worker runs jobs while the store writes
   * the last ones. Worth it for many short jobs. Held jobs are leased to this worker (renewed like
   * running ones), so no other worker takes them meanwhile: keep it 0 for long jobs. A stopping
   * worker gives its held jobs back, in their place in line and without using an attempt.
   * Default 0.
   */
  prefetch?: number
  /** How long a claim holds a job without renewal; renewed every third of it. Default 30 s. */
  leaseMs?: number
  /** Time limit per attempt for jobs that set none. Default: none. */
  defaultTimeoutMs?: number | null
  backoff?: BackoffOptions
  /** Stop after claiming this many jobs (and finishing them). */
  jobLimit?: number
  /** Stop after running this long. */
  timeLimitMs?: number
  /** Stop once the process's resident memory passes this, checked after each job. */
  memoryLimitBytes?: number
  /** How often to look for jobs whose lease expired. Default: a third of the lease, at most 10 s,
   * so a short lease also means a dead worker's jobs (and jobs handed to a waiter that froze) come
   * back soon. */
  recoverIntervalMs?: number
  /** Defaults to host:pid:random. */
  workerId?: string
  /** How handlers run; default inline (on this event loop). */
  executor?: Executor
  /**
   * When `executor` is not given: the strategy of the executor to build for `handlers`, with a pool
   * of `concurrency` children (docs/strategies.md). Default 'inline'.
   */
  strategy?: 'inline' | 'threads' | 'processes' | 'fork'
}

const WORKER_OPTION_KEYS = optionKeys<WorkerOptions>({
  store: true,
  handlers: true,
  queues: true,
  concurrency: true,
  prefetch: true,
  leaseMs: true,
  defaultTimeoutMs: true,
  backoff: true,
  jobLimit: true,
  timeLimitMs: true,
  memoryLimitBytes: true,
  recoverIntervalMs: true,
  workerId: true,
  executor: true,
  strategy: true,
})

/** How Worker.stop stops. */
export interface StopOptions {
  /** False aborts running jobs (put back to ready without using an attempt). Default true. */
  graceful?: boolean
}

const STOP_OPTION_KEYS = optionKeys<StopOptions>({ graceful: true })

export type StopReason =
  | 'requested' // stop() was called
  | 'stop-workers' // an operator asked every worker through the store
  | 'job-limit'
  | 'time-limit'
  | 'memory-limit'
  | 'store-lost' // the store's data is gone from under the worker (see Worker.stopError)

export interface WorkerEvents {
  'worker:started': []
  'worker:stopping': [reason: StopReason]
  'worker:stopped': [reason: StopReason]
  /** A store call failed; the worker retries it, or stops if the store is gone ('store-lost'). */
  'worker:error': [error: unknown]
  'job:claimed': [job: ClaimedJob]
  'job:completed': [job: ClaimedJob, result: unknown]
  /** The attempt failed and the job will run again at retryAt. */
  'job:failed': [job: ClaimedJob, error: JobError, retryAt: number]
  'job:dead': [job: ClaimedJob, error: JobError]
  'job:snoozed': [job: ClaimedJob, runAt: number]
  /** The worker no longer holds the job (it was cancelled, or its lease expired and was recovered). */
  'job:lease-lost': [job: ClaimedJob]
  'recover:done': [result: RecoverResult]
}

export interface WorkerCounts {
  claimed: number
  completed: number
  failed: number
  dead: number
  snoozed: number
  leaseLost: number
}

/** Why a running attempt was aborted: decides what is written about it. */
type AbortCause = 'timeout' | 'shutdown' | 'lease-lost'

/** A job whose handler runs, from its claim until its outcome is decided. */
interface Running {
  job: ClaimedJob
  abort: AttemptAbort
  cause: AbortCause | null
  timeoutMs: number | null
  timer: NodeJS.Timeout | null
}

const STOP_CHECK_INTERVAL_MS = 1000
const SETTLE_ATTEMPTS = 8
const STORE_ERROR_BACKOFF_MS = { baseMs: 100, factor: 2, maxMs: 5000 }
/** An outcome whose row was locked is written again within 10 ms first: most locks last a statement. */
const LOCKED_ROW_BACKOFF_MS = { baseMs: 10, factor: 3, maxMs: 5000 }

/**
 * Claims jobs from its queues, runs them under an executor and settles their outcomes.
 *
 * The loop: claim up to the free capacity in one store call; when the queues are drained, sleep in
 * store.waitForWork (no polling) until an enqueue, a due job, a stop request or stop(). Outcomes
 * of one tick are settled in one store call (the completer); leases of running jobs are renewed
 * in one call every third of the lease (the lease keeper); expired leases of dead workers are
 * swept periodically (the recoverer). Policy lives here: retry times come from the backoff, dead
 * when no attempts are left.
 */
export class Worker extends EventEmitter<WorkerEvents> {
  readonly workerId: string
  readonly queues: readonly string[]
  readonly concurrency: number
  readonly prefetch: number
  readonly counts: WorkerCounts = { claimed: 0, completed: 0, failed: 0, dead: 0, snoozed: 0, leaseLost: 0 }

  private readonly store: Store
  private readonly executor: Executor
  private readonly leaseMs: number
  private readonly options: WorkerOptions
  private readonly running = new Map<string, Running>()
  /** Claimed ahead (prefetch), waiting for a free slot, in claim order. */
  private readonly held: ClaimedJob[] = []
  /** Ended, their outcome being written: their leases are kept until the store has it. */
  private readonly settling = new Map<string, ClaimedJob>()
  /** Held past half their lease (a freeze, a stall): being renewed before they start, each in a slot. */
  private readonly confirming = new Map<string, ClaimedJob>()
  /**
   * When each lease this worker holds was last granted or renewed: the performance.now() at which
   * the call that did it was sent (the store read its clock after that). A job starts only while
   * this is recent; else its lease is renewed first, so a worker that froze with a claim's answer
   * unread never starts a job the store already gave to another.
   */
  private readonly leaseSince = new Map<string, number>()
  /**
   * Jobs whose record a write found locked, until a write about them succeeds: 'seen' after the
   * first, 'reported' once said as a worker error. The first is not reported: this worker's own
   * renewal and settlement of one job, on two connections, lock its row for a statement each.
   */
  private readonly lockedJobs = new Map<string, 'seen' | 'reported'>()
  /** Set once the worker has stopped: settlements waiting for a lock stop trying. */
  private finished = false
  /** Wakes a stopping worker waiting for its last outcomes to be written. */
  private onSettled: (() => void) | null = null
  /** Jobs asked for by claims in flight: they count against the room for more. */
  private claimsInFlight = 0
  /**
   * The job names this worker claims and waits for: those its executor has handlers for, known
   * once it started. Jobs of other names stay in line for the workers that know them, their
   * attempts unused, so workers with different handlers can share a queue (a rolling deploy
   * that adds a job type, a worker per kind of job).
   */
  private names: readonly string[] = []
  private readonly completer: TickBatcher<Settlement, SettleResult>
  private readonly leaseKeeper: LeaseKeeper
  private readonly recoverer: Recoverer
  /** Ends the loop's current wait (for capacity or a pause) when it must look again. */
  private wakeLoop: (() => void) | null = null
  private waitingForCapacity = false
  /** Aborts the loop's current waitForWork when it must look again (stop). */
  private workWait: AbortController | null = null
  private loop: Promise<void> | null = null
  private starting = false
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
    assertKnownKeys(options, WORKER_OPTION_KEYS, '')
    const { store, queues = ['default'], concurrency = 10, prefetch = 0, leaseMs = 30_000 } = options
    assertQueueList(queues)
    assertInteger(concurrency, 'concurrency', { min: 1, max: 10_000 })
    assertInteger(prefetch, 'prefetch', { min: 0, max: 10_000 })
    assertInteger(leaseMs, 'leaseMs', { min: 1, max: MAX_TIMEOUT_MS })
    if (leaseMs < 100) throw new ValidationError('invalid_option', 'leaseMs', 'must be at least 100 ms')
    if (options.jobLimit !== undefined) assertInteger(options.jobLimit, 'jobLimit', { min: 1 })
    if (options.timeLimitMs !== undefined)
      assertInteger(options.timeLimitMs, 'timeLimitMs', { min: 1, max: MAX_TIMEOUT_MS })
    if (options.recoverIntervalMs !== undefined) {
      assertInteger(options.recoverIntervalMs, 'recoverIntervalMs', { min: 1, max: MAX_TIMEOUT_MS })
    }
    if (options.memoryLimitBytes !== undefined) {
      assertInteger(options.memoryLimitBytes, 'memoryLimitBytes', { min: 1 })
    }
    if (options.defaultTimeoutMs != null)
      assertInteger(options.defaultTimeoutMs, 'defaultTimeoutMs', { min: 1, max: MAX_TIMEOUT_MS })
    if (options.backoff !== undefined) assertBackoffOptions(options.backoff, 'backoff')
    this.options = options
    this.store = store
    this.queues = [...queues]
    this.concurrency = concurrency
    this.prefetch = prefetch
    this.leaseMs = leaseMs
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`
    this.executor =
      options.executor ??
      createExecutor(options.strategy ?? 'inline', options.handlers, { size: concurrency })
    // With jobs held ahead, the next flush may go while one is in flight: the worker keeps
    // running jobs meanwhile, so two batches of outcomes can be on their way.
    this.completer = new TickBatcher((settlements) => this.flushSettlements(settlements), {
      maxInFlight: prefetch > 0 ? 2 : 1,
    })
    this.leaseKeeper = new LeaseKeeper({
      store,
      leaseMs,
      leases: () => this.leasedJobs().map((job) => ({ id: job.id, leaseToken: job.leaseToken })),
      onLost: (id) => this.leaseLost(id),
      onRenewed: (id, sentAt) => {
        this.leaseSince.set(id, sentAt)
        this.lockedJobs.delete(id)
      },
      onLocked: (id) => this.jobLocked(id, 'lease renewal'),
      onError: (error) => this.storeError(error),
    })
    this.recoverer = new Recoverer({
      store,
      leaseMs,
      intervalMs: options.recoverIntervalMs ?? Math.min(Math.round(leaseMs / 3), 10_000),
      onDone: (result) => this.emit('recover:done', result),
      onError: (error) => this.storeError(error),
    })
    this.stoppedPromise = new Promise((resolve) => (this.resolveStopped = resolve))
  }

  /** The job names this worker can run, and the only ones it claims (known once started). */
  get jobNames(): ReadonlySet<string> {
    return this.executor.jobNames
  }

  /** Jobs running now. */
  get activeCount(): number {
    return this.running.size
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
    this.stopRequestAtStart = await this.store.stopRequestedAt()
    this.lastStopCheckAt = performance.now()
    if (this.stopReason !== null) {
      // stop() came while starting: it already resolved `stopped`; run nothing.
      await this.executor.close()
      return
    }
    if (this.options.timeLimitMs !== undefined) {
      this.timeLimitTimer = setTimeout(() => this.beginStop('time-limit'), this.options.timeLimitMs)
    }
    this.recoverer.start()
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
      // Outcomes about to be written carry the claim for the room they left (settleAndClaim):
      // one store call instead of two.
      if (limit <= 0 || this.completer.hasPending) {
        await this.waitForCapacity()
        continue
      }
      if (!drained) {
        let jobs: ClaimedJob[]
        this.claimsInFlight += limit
        const sentAt = performance.now()
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
        for (const job of jobs) this.take(job, sentAt)
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
    const { waitForJobs } = this.store
    try {
      if (!this.store.capabilities.delivery || waitForJobs === undefined || limit <= 0) {
        const reason = await this.store.waitForWork({
          queues: this.queues,
          names: this.names,
          signal: wait.signal,
        })
        return { reason, jobs: 0 }
      }
      this.claimsInFlight += limit
      try {
        const claim = { limit, leaseMs: this.leaseMs, workerId: this.workerId }
        const { reason, jobs } = await waitForJobs.call(this.store, {
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
    const sentAt = performance.now()
    let results: SettleResult[]
    try {
      results = await this.store.takeDelivered!({
        leases: jobs.map((job) => ({ id: job.id, leaseToken: job.leaseToken })),
        leaseMs: this.leaseMs,
      })
    } catch (error) {
      // Not taken: their delivery leases run out and they go back in line, attempt unused.
      this.storeError(error)
      return
    }
    jobs.forEach((job, i) => {
      if (results[i] === 'ok') {
        this.take(job, sentAt)
      } else {
        this.counts.leaseLost++
        this.emit('job:lease-lost', job)
      }
    })
  }

  /**
   * The completer's flush. When the loop waits for room, the room these jobs left is filled in
   * the same store call (settleAndClaim): one commit instead of two.
   */
  private async flushSettlements(settlements: readonly Settlement[]): Promise<SettleResult[]> {
    const limit = this.waitingForCapacity && this.stopReason === null ? this.claimLimit() : 0
    if (limit <= 0) return this.store.settle({ settlements })
    const claim = {
      queues: this.queues,
      names: this.names,
      limit,
      leaseMs: this.leaseMs,
      workerId: this.workerId,
    }
    this.claimsInFlight += limit
    const sentAt = performance.now()
    try {
      const { settled, claimed } = await this.store.settleAndClaim({ settlements, claim })
      for (const job of claimed) this.take(job, sentAt)
      return settled
    } finally {
      this.claimsInFlight -= limit
    }
  }

  /**
   * How many jobs to claim now: the room left by running and held jobs and by claims in flight,
   * and no more than the job limit leaves.
   */
  private claimLimit(): number {
    const pending = this.held.length + this.claimsInFlight
    const room = this.concurrency + this.prefetch - this.runningOrStarting() - pending
    const { jobLimit } = this.options
    return jobLimit === undefined ? room : Math.min(room, jobLimit - this.counts.claimed - pending)
  }

  private jobLimitReached(): boolean {
    const { jobLimit } = this.options
    return jobLimit !== undefined && this.counts.claimed >= jobLimit
  }

  /** Every job this worker holds a lease on: running, held ahead, about to start, or being settled. */
  private leasedJobs(): ClaimedJob[] {
    return [
      ...[...this.running.values()].map(({ job }) => job),
      ...this.held,
      ...this.confirming.values(),
      ...this.settling.values(),
    ]
  }

  /** Slots in use: jobs running, and jobs whose lease is being renewed before they start. */
  private runningOrStarting(): number {
    return this.running.size + this.confirming.size
  }

  /** Waits until a job ends and leaves room (or the worker must stop). */
  private async waitForCapacity(): Promise<void> {
    this.waitingForCapacity = true
    await new Promise<void>((resolve) => (this.wakeLoop = resolve))
    // Let every job that ended in this tick free its slot, so one claim fills them all. Until
    // then the completer may still refill the slots in its own store call (flushSettlements).
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
    const now = performance.now()
    if (!force && now - this.lastStopCheckAt < STOP_CHECK_INTERVAL_MS) return
    this.lastStopCheckAt = now
    const requestedAt = await this.store.stopRequestedAt()
    if (requestedAt !== null && requestedAt !== this.stopRequestAtStart) this.beginStop('stop-workers')
  }

  // ── one job ────────────────────────────────────────────────────────────────────────────────

  /**
   * A claimed job (its lease granted by a call sent at `leasedAt`) runs now if a slot is free, else
   * waits in `held` for one.
   */
  private take(job: ClaimedJob, leasedAt: number): void {
    this.leaseSince.set(job.id, leasedAt)
    if (this.runningOrStarting() < this.concurrency && this.stopReason === null) {
      this.startJob(job)
    } else {
      this.held.push(job)
      this.leaseKeeper.start()
    }
  }

  /**
   * Runs a job in a free slot, if this worker surely still holds its lease: granted or renewed
   * less than half a lease ago (by this host's monotonic clock, which a frozen process's also
   * counts). Else, the lease is renewed first (fenced by its token) and the job runs only if that
   * succeeded.
   */
  private startJob(job: ClaimedJob): void {
    if (performance.now() - (this.leaseSince.get(job.id) ?? -Infinity) <= this.leaseMs / 2) {
      this.execute(job)
      return
    }
    this.confirming.set(job.id, job)
    this.leaseKeeper.start()
    const sentAt = performance.now()
    this.store.renew({ leases: [{ id: job.id, leaseToken: job.leaseToken }], leaseMs: this.leaseMs }).then(
      ([result]) => {
        this.confirming.delete(job.id)
        if (result !== 'ok') {
          this.forget(job.id)
          this.counts.leaseLost++
          this.emit('job:lease-lost', job)
          this.slotFreed()
        } else if (this.stopReason !== null) {
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
        this.storeError(error)
        this.slotFreed()
        this.stopKeeperWhenNoLeases()
      },
    )
  }

  /** The worker no longer holds this job's lease. */
  private forget(id: string): void {
    this.leaseSince.delete(id)
  }

  private execute(job: ClaimedJob): void {
    const timeoutMs = job.timeoutMs ?? this.options.defaultTimeoutMs ?? null
    const entry: Running = { job, abort: new AttemptAbort(), cause: null, timeoutMs, timer: null }
    this.running.set(job.id, entry)
    this.counts.claimed++
    this.leaseKeeper.start()
    this.emit('job:claimed', job)
    if (timeoutMs !== null) entry.timer = setTimeout(() => this.abortJob(job.id, 'timeout'), timeoutMs)
    this.executor.run({ job, abort: entry.abort }).then(
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
   * Turns an attempt's outcome into a settlement (the policy) and records it. The slot is free as
   * soon as the outcome is known; the lease is kept until the store has the outcome.
   */
  private settle(entry: Running, outcome: ExecutionOutcome): void {
    if (entry.timer !== null) clearTimeout(entry.timer)
    const { job } = entry
    const settlement = this.decide(entry, outcome, Date.now())
    this.running.delete(job.id)
    if (settlement === null) {
      this.forget(job.id)
      this.counts.leaseLost++
      this.emit('job:lease-lost', job)
      this.slotFreed()
      this.stopKeeperWhenNoLeases()
      return
    }
    this.settling.set(job.id, job)
    this.slotFreed()
    this.submitSettlement(settlement).then(
      (result) => {
        this.report(job, settlement, result)
        this.settled(job)
      },
      (error: unknown) => {
        // The store stayed unreachable: the lease runs out and the job runs again.
        this.storeError(error)
        this.settled(job)
      },
    )
  }

  /** The policy: what to write about an attempt. Null when nothing may be written (lease lost). */
  private decide(entry: Running, outcome: ExecutionOutcome, now: number): Settlement | null {
    const { job } = entry
    const base = { id: job.id, leaseToken: job.leaseToken }
    switch (outcome.kind) {
      case 'completed':
        if (outcome.result !== undefined) {
          try {
            serializePayload(outcome.result, 'result')
          } catch (error) {
            // Retrying would give the same result again: the job is dead, with the reason.
            const message = `the handler completed but its result cannot be stored: ${(error as Error).message}`
            return { ...base, kind: 'dead', error: { kind: 'permanent', message } }
          }
        }
        return { ...base, kind: 'completed', result: outcome.result }
      case 'snoozed':
        return { ...base, kind: 'snoozed', runAt: now + outcome.delayMs }
      case 'permanent':
        return { ...base, kind: 'dead', error: outcome.error }
      case 'failed':
        return this.failure(job, outcome.error, now)
      case 'aborted':
        switch (entry.cause) {
          case 'timeout': {
            const message = `timed out after ${entry.timeoutMs} ms`
            const error: JobError = { kind: 'timeout', message, timeoutMs: entry.timeoutMs! }
            // An isolating executor had to kill the child that ignored the abort: say how.
            const { killed } = outcome
            if (killed !== undefined) {
              const { exitCode, signal, stderrTail } = killed
              Object.assign(error, { message: `${message}; ${killed.message}`, exitCode, signal, stderrTail })
            }
            return this.failure(job, error, now)
          }
          case 'lease-lost':
            return null
          default:
            // Shutdown: back to ready at once, without using the attempt.
            return { ...base, kind: 'snoozed', runAt: now }
        }
    }
  }

  private failure(job: ClaimedJob, error: JobError, now: number): Settlement {
    const base = { id: job.id, leaseToken: job.leaseToken }
    return job.attempts < job.maxAttempts
      ? { ...base, kind: 'retry', runAt: now + backoffMs(job.attempts, this.options.backoff), error }
      : { ...base, kind: 'dead', error }
  }

  private report(job: ClaimedJob, settlement: Settlement, result: SettleResult): void {
    // Given up on while its row stayed locked: the lease decides what happens to it.
    if (result === 'locked') return
    if (result === 'lease_lost') {
      this.counts.leaseLost++
      this.emit('job:lease-lost', job)
      return
    }
    switch (settlement.kind) {
      case 'completed':
        this.counts.completed++
        this.emit('job:completed', job, settlement.result)
        break
      case 'retry':
        this.counts.failed++
        this.emit('job:failed', job, settlement.error, settlement.runAt)
        break
      case 'dead':
        this.counts.dead++
        this.emit('job:dead', job, settlement.error)
        break
      case 'snoozed':
        this.counts.snoozed++
        this.emit('job:snoozed', job, settlement.runAt)
        break
    }
  }

  /** A job's handler ended: its slot takes the next held job, or wakes a loop waiting for room. */
  private slotFreed(): void {
    // The memory limit is checked after each job, before its slot is used again.
    this.checkMemory()
    const next = this.stopReason === null ? this.held.shift() : undefined
    if (next !== undefined) this.startJob(next)
    // Only a loop waiting for room needs waking; one waiting for work has room already.
    else if (this.waitingForCapacity) this.interruptWait()
  }

  /** The store has the job's outcome (or gave up on it): the worker holds its lease no longer. */
  private settled(job: ClaimedJob): void {
    this.settling.delete(job.id)
    this.forget(job.id)
    this.onSettled?.()
    this.stopKeeperWhenNoLeases()
    if (this.waitingForCapacity) this.interruptWait()
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
    this.emit('job:lease-lost', job!)
    this.stopKeeperWhenNoLeases()
  }

  /** A stopping worker gives back the jobs it held ahead: in their place in line, attempt unused. */
  private async releaseHeld(): Promise<void> {
    const held = this.held.splice(0)
    if (held.length === 0) return
    for (const job of held) this.forget(job.id)
    try {
      await this.store.settle({ settlements: held.map(giveBack) })
    } catch (error) {
      // Their leases run out and they are recovered, with the attempt counted.
      this.storeError(error)
    }
  }

  /** A settlement must not be lost to a passing store failure: retry it while the lease lasts. */
  private async submitSettlement(settlement: Settlement): Promise<SettleResult> {
    for (let attempt = 1, lockedFor = 0; ; attempt++) {
      try {
        const result = await this.completer.submit(settlement)
        if (result !== 'locked') {
          this.lockedJobs.delete(settlement.id)
          return result
        }
        // Its row is locked: for a moment by this worker's own renewal, or outside Ferry. Only this
        // outcome waits, written again soon, then with backoff while the lock lasts. A stopping
        // worker waits for it at most a lease (finish()), then leaves it to the lease.
        this.jobLocked(settlement.id, 'outcome')
        await new Promise((resolve) => setTimeout(resolve, backoffMs(++lockedFor, LOCKED_ROW_BACKOFF_MS)))
        if (this.finished) return result
        attempt--
      } catch (error) {
        this.storeError(error)
        const delayMs = backoffMs(attempt, STORE_ERROR_BACKOFF_MS)
        // Past the lease the job is recovered and runs again: give up and let that happen. A store
        // that is gone will not take it either.
        if (attempt >= SETTLE_ATTEMPTS || isStoreLost(error)) throw error
        await new Promise((resolve) => setTimeout(resolve, delayMs))
      }
    }
  }

  /**
   * A write about this job found its row locked. Found locked again before any write succeeded, the
   * lock is held outside Ferry: said once, as a worker error.
   */
  private jobLocked(id: string, what: string): void {
    const state = this.lockedJobs.get(id)
    if (state === 'reported') return
    this.lockedJobs.set(id, state === undefined ? 'seen' : 'reported')
    if (state === 'seen') this.emit('worker:error', new JobLockedError(id, what))
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
    this.interruptWait()
  }

  private abortRunning(): void {
    this.hardStop = true
    for (const id of [...this.running.keys()]) this.abortJob(id, 'shutdown')
  }

  /** Waits until every outcome is written (some may wait for a lock), at most `ms`. */
  private async settlingDone(ms: number): Promise<void> {
    const deadline = performance.now() + ms
    while (this.settling.size > 0 && performance.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - performance.now()))
        this.onSettled = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      this.onSettled = null
    }
  }

  private checkMemory(): void {
    const limit = this.options.memoryLimitBytes
    if (limit !== undefined && process.memoryUsage.rss() > limit) this.beginStop('memory-limit')
  }

  /** After the loop: let running jobs end (or abort them on a hard stop), settle, release. */
  private async finish(): Promise<void> {
    if (this.timeLimitTimer !== null) clearTimeout(this.timeLimitTimer)
    while (this.runningOrStarting() > 0) {
      if (this.hardStop) this.abortRunning()
      await this.waitForCapacity()
    }
    await this.completer.drain()
    await this.settlingDone(this.leaseMs)
    this.finished = true
    await this.releaseHeld()
    this.leaseKeeper.stop()
    await this.recoverer.stop()
    await this.executor.close()
    const reason = this.stopReason ?? 'requested'
    this.emit('worker:stopped', reason)
    this.resolveStopped(reason)
  }
}

function toExecutorError(error: unknown): JobError {
  return {
    kind: 'crash',
    message: `the executor failed: ${error instanceof Error ? error.message : String(error)}`,
  }
}
