import { availableParallelism } from 'node:os'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { FerryError, ValidationError } from '../../core/errors.js'
import { assertInteger, assertKnownKeys, optionKeys } from '../../core/validate.js'
import type { HandlerSource } from '../handler-module.js'
import type { ChildMessage, ParentMessage } from './child/protocol.js'
import { appendToTail } from './child/stderr-tail.js'
import type { ChildExitDetail, Execution, ExecutionOutcome, Executor } from './executor.js'

/** Options shared by the isolating executors (threads, processes, fork). */
export interface PoolExecutorOptions {
  /**
   * Children (processes or threads) in the pool: attempts that run at once; more wait for a free
   * child. The worker's concurrency is the natural value (createExecutor passes it). Default: the
   * number of CPUs.
   */
  size?: number
  /**
   * Recycle a child after it ran this many jobs (php-fpm's pm.max_requests): bounds what a slow
   * leak can accumulate. Default 10,000; null for never. A pool that recycles keeps one spare
   * child loaded beyond `size`, so a leaving child's successor is ready at once.
   */
  maxJobsPerChild?: number | null
  /**
   * Recycle a child, after its job, once the memory it reports passed this: the process's RSS,
   * or for a thread its own heap (a thread's RSS is the whole process's). Default: none.
   */
  maxRssBytes?: number | null
  /**
   * Heap limit of each child in MB (`--max-old-space-size` for processes, `resourceLimits` for
   * threads): a job that passes it fails as 'ran out of memory' and the child is replaced.
   * Default: none, Node's own limit (a low default would break jobs that legitimately need memory).
   */
  maxHeapMb?: number | null
  /**
   * After an abort, how long a child has to answer before it is killed, and how long a child asked
   * to exit may take. Default 2000.
   */
  killGraceMs?: number
  /** How long a child may take to load the handler module. Default 30 s. */
  startTimeoutMs?: number
  /** Where children's output goes, line by line with a `[job <id>]` prefix. Default: this process's. */
  stdout?: NodeJS.WritableStream
  stderr?: NodeJS.WritableStream
}

export const POOL_EXECUTOR_OPTION_KEYS = optionKeys<PoolExecutorOptions>({
  size: true,
  maxJobsPerChild: true,
  maxRssBytes: true,
  maxHeapMb: true,
  killGraceMs: true,
  startTimeoutMs: true,
  stdout: true,
  stderr: true,
})

/** How a child ended, as its spawner saw it. */
export interface ChildExit {
  exitCode: number | null
  signal: string | null
  /** The child died of V8's heap limit. */
  outOfMemory: boolean
  /** An uncaught error reported by a thread's 'error' event (its stack). */
  errorText?: string
  /** The pool terminated the thread (it has no signal to report). */
  terminated?: boolean
}

/** What a spawner reports about its child. `exit` comes once, after the child's output. */
export interface ChildEvents {
  message(message: ChildMessage): void
  line(stream: 'stdout' | 'stderr', line: string): void
  exit(exit: ChildExit): void
}

/** One child as the pool drives it. */
export interface ChildHandle {
  /** Names the child in output lines when no job runs in it: a pid or a thread id. */
  readonly label: string
  send(message: ParentMessage): void
  /**
   * Ends the child now: a process's whole process group (the child and what its handlers started)
   * gets SIGKILL, since the child ignores SIGTERM (processes.ts says why); a thread is terminated.
   */
  kill(): void
}

export interface ChildPoolConfig {
  strategy: 'threads' | 'processes' | 'fork'
  noun: 'process' | 'thread'
  spawn: (events: ChildEvents) => ChildHandle
  /** Spawn children only when jobs wait for one (fork), instead of keeping the pool full. */
  spawnOnDemand: boolean
  /** The heap limit the spawner applies, for the out-of-memory message. */
  heapLimitMb: number | null
}

/**
 * Bounds what a slow leak can pile up, yet leaves a child warm most of its life: a new child runs
 * its first ~1,000 jobs slower while V8 optimizes the message path (a bare IPC round trip 0.2–0.3
 * ms on average over those, 0.05–0.08 ms afterwards, on the benchmark machine), so recycling every
 * 1,000 jobs kept every child cold; every 10,000 makes the warm-up a tenth of its life.
 */
const DEFAULT_MAX_JOBS_PER_CHILD = 10_000
const DEFAULT_KILL_GRACE_MS = 2000
const DEFAULT_START_TIMEOUT_MS = 30_000
const RESPAWN_BACKOFF = { baseMs: 100, maxMs: 5000 }

interface Attempt {
  execution: Execution
  resolve: (outcome: ExecutionOutcome) => void
  /** Where it waited: a job handed ahead and given back goes there again. */
  waiting: Waiting
  /** The attempt was aborted (by the worker, or by close()): its end is reported as 'aborted'. */
  aborted: boolean
  /** Handed ahead, and asked back for a child that fell idle. */
  withdrawing: boolean
}

interface PoolChild {
  handle: ChildHandle
  state: 'starting' | 'idle' | 'busy' | 'stopping'
  jobsRun: number
  /** The attempt it runs. */
  attempt: Attempt | null
  /**
   * The attempt handed ahead (pipelining): sent while `attempt` runs, so the child starts it as
   * soon as it sent `attempt`'s outcome, without waiting a round trip for it. It has not started
   * until `attempt`'s outcome arrives; if the child dies first, it goes to another child.
   */
  next: Attempt | null
  /** Retire it once it is free: it ran its last job, or an aborted handler may linger in it. */
  worn: boolean
  /**
   * The job that ran last: output arrives on its own stream, and can trail the outcome message,
   * so lines seen while the child is idle are most likely that job's.
   */
  lastJobId: string | null
  stderrTail: string[]
  /** Why it failed to start, when it said so. */
  loadError: string | null
  /** The start timeout, an abort's kill grace, or a recycled child's exit grace. */
  timer: NodeJS.Timeout | null
}

interface Waiting {
  execution: Execution
  resolve: (outcome: ExecutionOutcome) => void
}

/**
 * The supervisor of an isolating executor: a pool of children (processes or threads) that each
 * load the handler module once and run one attempt at a time, the php-fpm idea. It reacts only to
 * children's messages and exits and to its own timers (start timeout, kill grace, respawn
 * backoff): nothing polls.
 */
export class ChildPool implements Executor {
  readonly strategy: 'threads' | 'processes' | 'fork'
  private readonly config: ChildPoolConfig
  private readonly handlersUrl: string
  private readonly size: number
  /**
   * Children kept loaded beyond `size`, never running more than `size` attempts at once: a
   * recycled (or dead) child's successor is ready when it leaves, so no job waits for a start.
   */
  private readonly spares: number
  private readonly maxJobsPerChild: number | null
  private readonly maxMemoryBytes: number | null
  private readonly killGraceMs: number
  private readonly startTimeoutMs: number
  private readonly stdout: NodeJS.WritableStream
  private readonly stderr: NodeJS.WritableStream
  private readonly children = new Set<PoolChild>()
  private waiting: Waiting[] = []
  private names = new Set<string>()
  private started = false
  private closing = false
  /** Start failures since a child last became ready: the respawn backoff grows with them. */
  private startFailures = 0
  private backoffTimer: NodeJS.Timeout | null = null
  /** While start() waits for the first children. */
  private starting: { resolve: () => void; reject: (error: Error) => void } | null = null
  private allExited: (() => void) | null = null

  constructor(
    source: HandlerSource,
    options: PoolExecutorOptions,
    config: ChildPoolConfig,
    fixed: { maxJobsPerChild?: number } = {},
  ) {
    assertKnownKeys(options, POOL_EXECUTOR_OPTION_KEYS, '')
    this.strategy = config.strategy
    this.config = config
    this.handlersUrl = handlerModuleUrl(source, config.strategy)
    this.size = checkCount(options.size ?? availableParallelism(), 'size')
    const maxJobs = fixed.maxJobsPerChild ?? options.maxJobsPerChild
    this.maxJobsPerChild =
      maxJobs === null ? null : checkCount(maxJobs ?? DEFAULT_MAX_JOBS_PER_CHILD, 'maxJobsPerChild')
    this.maxMemoryBytes = options.maxRssBytes == null ? null : checkCount(options.maxRssBytes, 'maxRssBytes')
    const recycles = this.maxJobsPerChild !== null || this.maxMemoryBytes !== null
    this.spares = config.spawnOnDemand || !recycles ? 0 : 1
    this.killGraceMs = checkCount(options.killGraceMs ?? DEFAULT_KILL_GRACE_MS, 'killGraceMs')
    this.startTimeoutMs = checkCount(options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS, 'startTimeoutMs')
    this.stdout = options.stdout ?? process.stdout
    this.stderr = options.stderr ?? process.stderr
  }

  get jobNames(): ReadonlySet<string> {
    return this.names
  }

  /** Children alive now (starting, idle, busy or stopping): for tests and diagnostics. */
  get childCount(): number {
    return this.children.size
  }

  /**
   * Starts the pool (one child when spawning on demand) and resolves once every child loaded the
   * handler module; rejects, leaving nothing running, when one cannot.
   */
  async start(): Promise<void> {
    if (this.started)
      throw new ValidationError('invalid_option', 'start', `the ${this.strategy} executor is already started`)
    this.started = true
    const ready = new Promise<void>((resolve, reject) => (this.starting = { resolve, reject }))
    for (let i = 0; i < this.initialCount(); i++) this.spawn()
    try {
      await ready
    } catch (error) {
      await this.close()
      throw error
    } finally {
      this.starting = null
    }
  }

  run(execution: Execution): Promise<ExecutionOutcome> {
    if (this.closing) return Promise.resolve({ kind: 'aborted' })
    if (!this.names.has(execution.job.name)) {
      const message = `no handler for job name "${execution.job.name}" in this worker`
      return Promise.resolve({ kind: 'failed', error: { kind: 'unknown_handler', message } })
    }
    if (execution.abort.aborted) return Promise.resolve({ kind: 'aborted' })
    return new Promise((resolve) => {
      const waiting: Waiting = { execution, resolve }
      this.waiting.push(waiting)
      // Aborted while waiting for a child: it never started, so there is nothing to stop.
      execution.abort.onAbort(() => {
        const index = this.waiting.indexOf(waiting)
        if (index === -1) return
        this.waiting.splice(index, 1)
        resolve({ kind: 'aborted' })
      })
      this.dispatch()
      this.fill()
    })
  }

  /** Asks every child to exit (aborting running attempts first), kills stragglers, resolves when all are gone. */
  async close(): Promise<void> {
    this.closing = true
    if (this.backoffTimer !== null) clearTimeout(this.backoffTimer)
    this.backoffTimer = null
    for (const { resolve } of this.waiting.splice(0)) resolve({ kind: 'aborted' })
    if (this.children.size === 0) return
    const exited = new Promise<void>((resolve) => (this.allExited = resolve))
    for (const child of this.children) {
      if (child.next !== null) this.abortAttempt(child, child.next, 'the worker is closing its executor')
      if (child.attempt !== null)
        this.abortAttempt(child, child.attempt, 'the worker is closing its executor')
      else if (child.state !== 'stopping') this.retire(child)
    }
    await exited
  }

  // ── children ──────────────────────────────────────────────────────────────────────────────

  private spawn(): void {
    const child: PoolChild = {
      handle: null as unknown as ChildHandle,
      state: 'starting',
      jobsRun: 0,
      attempt: null,
      next: null,
      worn: false,
      lastJobId: null,
      stderrTail: [],
      loadError: null,
      timer: null,
    }
    this.children.add(child)
    child.handle = this.config.spawn({
      message: (message) => this.onMessage(child, message),
      line: (stream, line) => this.onLine(child, stream, line),
      exit: (exit) => this.onExit(child, exit),
    })
    child.timer = setTimeout(() => {
      child.timer = null
      child.loadError = `it did not load the handler module within ${this.startTimeoutMs} ms`
      child.handle.kill()
    }, this.startTimeoutMs)
    child.handle.send({
      type: 'load',
      handlers: this.handlersUrl,
      reportMemory: this.maxMemoryBytes !== null,
    })
  }

  /** Keeps the pool at its size (or, spawning on demand, at what waiting jobs need). */
  private fill(): void {
    if (this.closing || !this.started || this.starting !== null || this.backoffTimer !== null) return
    let live = 0
    let free = 0
    for (const child of this.children) {
      if (child.state === 'stopping') continue
      live++
      if (child.state !== 'busy') free++
    }
    const wanted = this.config.spawnOnDemand
      ? Math.min(this.size, live + this.waiting.length - free)
      : this.size + this.spares
    for (; live < wanted; live++) this.spawn()
  }

  /**
   * Hands waiting attempts to idle children, at most `size` running at once; the oldest idle
   * child goes first, so a spare stays a spare until a child leaves. Attempts still waiting then
   * are handed ahead to busy children, one each (pipelining). When nothing waits, a child that
   * fell idle asks back an attempt handed ahead to a busy one, which may run long.
   */
  private dispatch(): void {
    let busy = 0
    let idle = 0
    for (const child of this.children) {
      if (child.state === 'busy') busy++
      else if (child.state === 'idle') idle++
    }
    for (const child of this.children) {
      if (this.waiting.length === 0 || busy >= this.size) break
      if (child.state !== 'idle') continue
      this.assign(child, this.waiting.shift()!)
      busy++
      idle--
    }
    if (this.waiting.length > 0) {
      for (const child of this.children) {
        if (this.waiting.length === 0) return
        if (this.canHandAhead(child)) this.handAhead(child, this.waiting.shift()!)
      }
    } else if (idle > 0 && busy < this.size) {
      let wanted = Math.min(idle, this.size - busy)
      for (const child of this.children) {
        if (wanted === 0) return
        const next = child.next
        if (next === null || next.withdrawing || next.aborted) continue
        next.withdrawing = true
        child.handle.send({ type: 'withdraw', jobId: next.execution.job.id })
        wanted--
      }
    }
  }

  /**
   * A job may wait in a busy child when it cannot change what the child's limits decide: not past
   * maxJobsPerChild, and not with a memory limit (judged after every job).
   */
  private canHandAhead(child: PoolChild): boolean {
    return (
      child.state === 'busy' &&
      child.next === null &&
      !child.worn &&
      child.attempt !== null &&
      !child.attempt.aborted &&
      this.maxMemoryBytes === null &&
      (this.maxJobsPerChild === null || child.jobsRun + 2 <= this.maxJobsPerChild)
    )
  }

  private assign(child: PoolChild, waiting: Waiting): void {
    const attempt = this.attemptOf(child, waiting)
    child.state = 'busy'
    this.begin(child, attempt)
    child.handle.send({ type: 'run', job: waiting.execution.job })
  }

  private handAhead(child: PoolChild, waiting: Waiting): void {
    child.next = this.attemptOf(child, waiting)
    child.handle.send({ type: 'run', job: waiting.execution.job })
  }

  private attemptOf(child: PoolChild, waiting: Waiting): Attempt {
    const { execution, resolve } = waiting
    const attempt: Attempt = { execution, resolve, waiting, aborted: false, withdrawing: false }
    execution.abort.onAbort(() => this.abortAttempt(child, attempt, 'aborted'))
    return attempt
  }

  /** `attempt` is now the one running in the child. */
  private begin(child: PoolChild, attempt: Attempt): void {
    child.attempt = attempt
    child.lastJobId = attempt.execution.job.id
    // The tail describes this attempt's crash, not an earlier job's noise.
    child.stderrTail = []
    if (attempt.aborted) this.stopRunning(child, attempt, 'aborted')
  }

  /** An attempt handed ahead that never started: to another child, or ended if it was aborted. */
  private giveBack(attempt: Attempt): void {
    if (attempt.aborted || this.closing) attempt.resolve({ kind: 'aborted' })
    else this.waiting.unshift(attempt.waiting)
  }

  /**
   * The running attempt: tells the child to abort, and kills it when it does not answer within
   * the grace period. One handed ahead: asks for it back (if it started meanwhile, it is
   * stopped when its turn comes).
   */
  private abortAttempt(child: PoolChild, attempt: Attempt, reason: string): void {
    if (attempt.aborted) return
    if (child.attempt === attempt) {
      attempt.aborted = true
      this.stopRunning(child, attempt, reason)
    } else if (child.next === attempt) {
      attempt.aborted = true
      child.handle.send({ type: 'withdraw', jobId: attempt.execution.job.id })
    }
  }

  private stopRunning(child: PoolChild, attempt: Attempt, reason: string): void {
    child.handle.send({ type: 'abort', jobId: attempt.execution.job.id, reason })
    child.timer = setTimeout(() => {
      child.timer = null
      child.state = 'stopping'
      child.handle.kill()
    }, this.killGraceMs)
  }

  /** Asks an idle child to exit (recycling, close); kills it if it takes longer than the grace period. */
  private retire(child: PoolChild): void {
    child.state = 'stopping'
    if (child.timer !== null) clearTimeout(child.timer)
    child.handle.send({ type: 'exit' })
    child.timer = setTimeout(() => {
      child.timer = null
      child.handle.kill()
    }, this.killGraceMs)
  }

  private onMessage(child: PoolChild, message: ChildMessage): void {
    switch (message.type) {
      case 'ready':
        if (child.state !== 'starting') return
        if (child.timer !== null) clearTimeout(child.timer)
        child.timer = null
        child.state = 'idle'
        this.startFailures = 0
        if (this.names.size === 0) this.names = new Set(message.jobNames)
        if (this.starting !== null && this.countReady() === this.initialCount()) {
          this.starting.resolve()
        }
        if (this.closing) this.retire(child)
        else this.dispatch()
        break
      case 'load-failed':
        // The child exits by itself (its exit counts the failure), unless the module left
        // something running in it.
        child.loadError = message.message
        if (child.timer !== null) clearTimeout(child.timer)
        child.timer = setTimeout(() => {
          child.timer = null
          child.handle.kill()
        }, this.killGraceMs)
        break
      case 'outcome': {
        const attempt = child.attempt
        if (attempt === null || attempt.execution.job.id !== message.jobId) return
        if (child.timer !== null) clearTimeout(child.timer)
        child.timer = null
        child.attempt = null
        child.jobsRun++
        attempt.resolve(attempt.aborted ? { kind: 'aborted' } : message.outcome)
        // An aborted handler may still run inside (one that ignored its signal): do not reuse it.
        // (The child gave back what was handed ahead when it got the abort; what it had started
        // already began after that handler had ended by itself.)
        if (
          attempt.aborted ||
          (this.maxJobsPerChild !== null && child.jobsRun >= this.maxJobsPerChild) ||
          (this.maxMemoryBytes !== null && (message.memoryBytes ?? 0) > this.maxMemoryBytes)
        ) {
          child.worn = true
        }
        const next = child.next
        child.next = null
        if (next !== null) this.begin(child, next)
        else if (this.closing || child.worn) this.retire(child)
        else child.state = 'idle'
        this.fill()
        this.dispatch()
        break
      }
      case 'withdrawn': {
        const next = child.next
        if (next === null || next.execution.job.id !== message.jobId) return
        child.next = null
        this.giveBack(next)
        this.dispatch()
        break
      }
    }
  }

  private onExit(child: PoolChild, exit: ChildExit): void {
    if (child.timer !== null) clearTimeout(child.timer)
    child.timer = null
    this.children.delete(child)
    const wasStarting = child.state === 'starting'
    if (exit.errorText !== undefined) this.keepStderr(child, exit.errorText)
    const attempt = child.attempt
    if (attempt !== null) {
      child.attempt = null
      const detail = this.describeExit(child, exit)
      if (attempt.aborted) attempt.resolve({ kind: 'aborted', killed: detail })
      else attempt.resolve({ kind: 'failed', error: { kind: 'crash', ...detail } })
    } else if (wasStarting) {
      this.onStartFailed(child, exit)
    }
    // It never started: the child sent the outcome before it (and output before exit).
    if (child.next !== null) {
      const next = child.next
      child.next = null
      this.giveBack(next)
    }
    if (this.closing) {
      if (this.children.size === 0) this.allExited?.()
      return
    }
    this.fill()
    this.dispatch()
  }

  private onStartFailed(child: PoolChild, exit: ChildExit): void {
    const reason =
      child.loadError ??
      `${this.describeExit(child, exit).message.replace(' running the job', '')} before it was ready` +
        (child.stderrTail.length > 0 ? `:\n${child.stderrTail.join('\n')}` : '')
    if (this.starting !== null) {
      this.starting.reject(
        new FerryError('invalid_option', `the ${this.strategy} executor cannot start: ${reason}`),
      )
      return
    }
    // A child that keeps failing to start must not spin: wait longer after each failure.
    this.startFailures++
    const delayMs = Math.min(RESPAWN_BACKOFF.baseMs * 2 ** (this.startFailures - 1), RESPAWN_BACKOFF.maxMs)
    this.stderr.write(
      `[ferry ${this.strategy}] a ${this.config.noun} failed to start (${reason}); retrying in ${delayMs} ms\n`,
    )
    if (this.backoffTimer !== null) return
    this.backoffTimer = setTimeout(() => {
      this.backoffTimer = null
      this.fill()
    }, delayMs)
  }

  private describeExit(child: PoolChild, exit: ChildExit): ChildExitDetail {
    const { noun } = this.config
    const stderrTail = child.stderrTail.join('\n')
    const outOfMemory =
      exit.outOfMemory || /JavaScript heap out of memory|Reached heap limit/.test(stderrTail)
    let message: string
    if (outOfMemory) {
      const limit = this.config.heapLimitMb === null ? "Node's default" : `${this.config.heapLimitMb} MB`
      message = `the ${noun} running the job ran out of memory (heap limit ${limit})`
    } else if (exit.terminated === true) {
      message = `the ${noun} running the job was terminated`
    } else if (exit.signal !== null) {
      message = `the ${noun} running the job was killed by ${exit.signal}`
    } else {
      message = `the ${noun} running the job exited with code ${exit.exitCode}`
      const firstLine = exit.errorText?.split('\n', 1)[0]
      if (firstLine) message += ` (${firstLine})`
    }
    return { message, exitCode: exit.exitCode, signal: exit.signal, stderrTail }
  }

  /** Children start() waits for. */
  private initialCount(): number {
    return this.config.spawnOnDemand ? 1 : this.size + this.spares
  }

  private countReady(): number {
    let ready = 0
    for (const child of this.children) if (child.state === 'idle' || child.state === 'busy') ready++
    return ready
  }

  // ── output ────────────────────────────────────────────────────────────────────────────────

  private onLine(child: PoolChild, stream: 'stdout' | 'stderr', line: string): void {
    const prefix =
      child.lastJobId !== null ? `[job ${child.lastJobId}]` : `[${this.config.noun} ${child.handle.label}]`
    ;(stream === 'stdout' ? this.stdout : this.stderr).write(`${prefix} ${line}\n`)
    if (stream === 'stderr') this.keepStderr(child, line)
  }

  private keepStderr(child: PoolChild, text: string): void {
    appendToTail(child.stderrTail, text)
  }
}

/** Isolating executors load handlers in another process or thread: they need the module's location. */
function handlerModuleUrl(source: HandlerSource, strategy: string): string {
  if (source instanceof URL) return source.href
  if (typeof source === 'string') return pathToFileURL(resolve(source)).href
  throw new ValidationError(
    'invalid_option',
    'handlers',
    `the ${strategy} strategy needs handlers as a module path`,
  )
}

/** The pool's sizes, counts and times, all positive integers; returned so the fields read as one line. */
function checkCount(value: unknown, field: string): number {
  assertInteger(value, field, { min: 1 })
  return value
}

/** Splits a child's output stream into lines (the last one flushed when the stream ends). */
export function forEachLine(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let pending = ''
  stream.setEncoding('utf8')
  stream.on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n')
    pending = lines.pop()!
    for (const line of lines) onLine(line.endsWith('\r') ? line.slice(0, -1) : line)
  })
  stream.on('end', () => {
    if (pending !== '') onLine(pending)
    pending = ''
  })
}
