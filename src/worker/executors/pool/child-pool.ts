import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { FerryError, ValidationError } from '../../../core/errors.js'
import type { HandlerSource } from '../../handler-module.js'
import type { ChildMessage } from '../child/protocol.js'
import { appendToTail } from '../child/stderr-tail.js'
import type { ChildExitDetail, Execution, ExecutionOutcome, Executor, NextExecution } from '../executor.js'
import type { ChildExit, ChildSpawner } from './child-handle.js'
import { PoolChild, type Attempt, type Waiting } from './pool-child.js'
import { poolSettings, type PoolExecutorOptions, type PoolSettings } from './pool-options.js'

export interface ChildPoolConfig {
  strategy: 'threads' | 'processes' | 'fork'
  noun: 'process' | 'thread'
  /** Makes the function that starts one child, from the checked options (heap limit, kill grace). */
  spawner: (settings: PoolSettings) => ChildSpawner
  /** Spawn children only when jobs wait for one (fork), instead of keeping the pool full. */
  spawnOnDemand: boolean
}

const RESPAWN_BACKOFF = { baseMs: 100, maxMs: 5000 }
/**
 * Attempts handed ahead to one busy child at most. With one, a child running short jobs waited
 * after each for the parent to hear of its outcome and send the next: 2,000 no-op jobs through
 * `ferry work --concurrency 1` cost 0.65 ms a job under `processes` against 0.17 ms inline
 * (bench isolation-cost, 2026-12-07), where the worker held ten jobs ahead.
 */
export const HAND_AHEAD_MAX = 10

/**
 * The supervisor of an isolating executor: a pool of children (processes or threads) that each
 * load the handler module once and run one attempt at a time, the php-fpm idea. It reacts only to
 * children's messages and exits and to its own timers (start timeout, kill grace, respawn
 * backoff): nothing polls.
 */
export class ChildPool implements Executor {
  readonly strategy: 'threads' | 'processes' | 'fork'
  private readonly config: ChildPoolConfig
  private readonly spawnChild: ChildSpawner
  /** For the out-of-memory message. */
  private readonly heapLimitMb: number | null
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
    const settings = poolSettings(options, '')
    this.strategy = config.strategy
    this.config = config
    this.spawnChild = config.spawner(settings)
    this.heapLimitMb = settings.heapLimitMb
    this.handlersUrl = handlerModuleUrl(source, config.strategy)
    this.size = settings.size
    this.maxJobsPerChild = fixed.maxJobsPerChild ?? settings.maxJobsPerChild
    this.maxMemoryBytes = settings.maxMemoryBytes
    const recycles = this.maxJobsPerChild !== null || this.maxMemoryBytes !== null
    this.spares = config.spawnOnDemand || !recycles ? 0 : 1
    this.killGraceMs = settings.killGraceMs
    this.startTimeoutMs = settings.startTimeoutMs
    this.stdout = settings.stdout
    this.stderr = settings.stderr
  }

  get jobNames(): ReadonlySet<string> {
    return this.names
  }

  /** Children that have not exited yet, whatever their state: for tests and diagnostics. */
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

  /**
   * The worker's next job for a slot, sent ahead to a busy child that can take it (canHandAhead):
   * the child starts it as soon as it sent its running job's outcome, and the worker hears of both
   * at once. Never to an idle child, nor past attempts waiting here (they started, for the worker).
   */
  runNext(next: NextExecution): Promise<ExecutionOutcome | null> | null {
    if (this.closing || this.waiting.length > 0 || next.abort.aborted || next.recall.aborted) return null
    if (!this.names.has(next.job.name)) return null
    let child: PoolChild | undefined
    for (const candidate of this.children) {
      if (this.canHandAhead(candidate)) {
        child = candidate
        break
      }
    }
    if (child === undefined) return null
    const busy = child
    return new Promise((resolve) => {
      const handOver = { startBy: next.startBy, started: next.onStart, notStarted: () => resolve(null) }
      const attempt = this.attemptOf(busy, { execution: next, resolve, handOver })
      next.recall.onAbort(() => {
        if (busy.ahead.includes(attempt) && !attempt.withdrawing && !attempt.aborted) busy.withdraw(attempt)
      })
      busy.handAhead(attempt)
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
      for (const ahead of [...child.ahead]) child.abort(ahead, 'the worker is closing its executor')
      if (child.attempt !== null) child.abort(child.attempt, 'the worker is closing its executor')
      else if (child.live) child.retire()
    }
    await exited
  }

  // ── children ──────────────────────────────────────────────────────────────────────────────

  private spawn(): void {
    const child = new PoolChild({
      spawn: this.spawnChild,
      handlersUrl: this.handlersUrl,
      reportMemory: this.maxMemoryBytes !== null,
      startTimeoutMs: this.startTimeoutMs,
      killGraceMs: this.killGraceMs,
      onMessage: (child, message) => this.onMessage(child, message),
      onLine: (child, stream, line) => this.onLine(child, stream, line),
      onExit: (child, exit) => this.onExit(child, exit),
    })
    this.children.add(child)
  }

  /** Keeps the pool at its size (or, spawning on demand, at what waiting jobs need). */
  private fill(): void {
    if (this.closing || !this.started || this.starting !== null || this.backoffTimer !== null) return
    let live = 0
    let free = 0
    for (const child of this.children) {
      if (!child.live) continue
      live++
      if (!child.running) free++
    }
    const wanted = this.config.spawnOnDemand
      ? Math.min(this.size, live + this.waiting.length - free)
      : this.size + this.spares
    for (; live < wanted; live++) this.spawn()
  }

  /**
   * Hands waiting attempts to idle children, at most `size` running at once; the oldest idle
   * child goes first, so a spare stays a spare until a child leaves. Attempts still waiting then
   * are handed ahead to busy children, round robin, up to HAND_AHEAD_MAX each (pipelining). When
   * nothing waits, a child that fell idle asks back an attempt handed ahead to a busy one, which
   * may run long.
   */
  private dispatch(): void {
    let busy = 0
    let idle = 0
    for (const child of this.children) {
      if (child.running) busy++
      else if (child.state === 'idle') idle++
    }
    for (const child of this.children) {
      if (this.waiting.length === 0 || busy >= this.size) break
      if (child.state !== 'idle') continue
      child.run(this.attemptOf(child, this.waiting.shift()!))
      busy++
      idle--
    }
    if (this.waiting.length > 0) {
      let handed = true
      while (handed && this.waiting.length > 0) {
        handed = false
        for (const child of this.children) {
          if (this.waiting.length === 0) return
          if (!this.canHandAhead(child)) continue
          child.handAhead(this.attemptOf(child, this.waiting.shift()!))
          handed = true
        }
      }
    } else if (idle > 0 && busy < this.size) {
      let wanted = Math.min(idle, this.size - busy)
      for (const child of this.children) {
        if (wanted === 0) return
        const last = child.lastAhead
        if (last === null) continue
        child.withdraw(last)
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
      child.ahead.length < HAND_AHEAD_MAX &&
      !child.worn &&
      child.attempt !== null &&
      !child.attempt.aborted &&
      this.maxMemoryBytes === null &&
      (this.maxJobsPerChild === null || child.jobsRun + 2 + child.ahead.length <= this.maxJobsPerChild)
    )
  }

  private attemptOf(child: PoolChild, waiting: Waiting): Attempt {
    const attempt: Attempt = { ...waiting, waiting, aborted: false, withdrawing: false }
    const { execution } = waiting
    execution.abort.onAbort(() => child.abort(attempt, 'aborted'))
    return attempt
  }

  /**
   * An attempt handed ahead that never started: to another child, or ended if it was aborted; the
   * worker's own (runNext) back to the worker.
   */
  private giveBack(attempt: Attempt): void {
    if (attempt.handOver !== undefined) attempt.handOver.notStarted()
    else if (attempt.aborted || this.closing) attempt.resolve({ kind: 'aborted' })
    else this.waiting.unshift(attempt.waiting)
  }

  private onMessage(child: PoolChild, message: ChildMessage): void {
    switch (message.type) {
      case 'ready':
        if (!child.ready()) return
        this.startFailures = 0
        if (this.names.size === 0) this.names = new Set(message.jobNames)
        if (this.starting !== null && this.countReady() === this.initialCount()) {
          this.starting.resolve()
        }
        if (this.closing) child.retire()
        else this.dispatch()
        break
      case 'load-failed':
        // Its exit counts the failure.
        child.loadFailed(message.message)
        break
      case 'outcome': {
        if (child.attempt?.execution.job.id !== message.jobId) return
        const attempt = child.outcomeArrived()
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
        if (child.attempt === null) {
          if (this.closing || child.worn) child.retire()
          else child.idle()
        }
        this.fill()
        this.dispatch()
        break
      }
      case 'progress':
      case 'log': {
        // Sent before its outcome, so its job is the one the child runs.
        const report =
          child.attempt?.execution.job.id === message.jobId ? child.attempt.execution.report : undefined
        if (message.type === 'progress') report?.progress(message.progress)
        else report?.log(message.line)
        break
      }
      case 'withdrawn': {
        const back = child.withdrawn(message.jobId)
        if (back === null) return
        this.giveBack(back)
        this.dispatch()
        break
      }
    }
  }

  private onExit(child: PoolChild, exit: ChildExit): void {
    const wasStarting = child.state === 'starting' || child.state === 'failed-to-start'
    child.exited()
    this.children.delete(child)
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
    for (const ahead of child.ahead.splice(0)) this.giveBack(ahead)
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
      const limit = this.heapLimitMb === null ? "Node's default" : `${this.heapLimitMb} MB`
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
    for (const child of this.children) if (child.state === 'idle' || child.running) ready++
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
