import {
  abortMessage,
  exitMessage,
  loadMessage,
  runMessage,
  withdrawMessage,
  type ChildMessage,
} from '../child/protocol.js'
import type { Execution, ExecutionOutcome } from '../executor.js'
import type { ChildExit, ChildHandle, ChildSpawner } from './child-handle.js'

/** An attempt waiting for a child. */
export interface Waiting {
  execution: Execution
  resolve: (outcome: ExecutionOutcome) => void
  /** Handed over by the worker before a slot was free (Executor.runNext): it only ever waits in a busy child. */
  handOver?: HandOver
}

/** What the pool owes a NextExecution: its deadline, and word of whether it started. */
export interface HandOver {
  startBy: number
  started: () => void
  /** It never started: given back, and the worker decides where it runs. */
  notStarted: () => void
}

/** An attempt handed to a child. */
export interface Attempt extends Waiting {
  /** Where it waited: a job handed ahead and given back goes there again. */
  waiting: Waiting
  /** The attempt was aborted (by the worker, or by close()): its end is reported as 'aborted'. */
  aborted: boolean
  /** Handed ahead, and asked back for a child that fell idle. */
  withdrawing: boolean
}

/**
 * Where a child is in its life. Each state that waits for the child has its own deadline, and
 * what happens when it passes:
 *
 * - `starting`: loading the handler module; past `startTimeoutMs` it is killed.
 * - `failed-to-start`: it said it cannot load the module (and should exit by itself: past the
 *   kill grace it is killed), or it was killed for taking too long.
 * - `idle`: ready, running nothing.
 * - `busy`: running `attempt` (and maybe holding attempts handed `ahead`).
 * - `aborting`: told to abort `attempt`; past the kill grace it is killed.
 * - `exiting`: asked to exit (recycled, closing); past the kill grace it is killed.
 * - `killed`: killed by the pool, its exit still to come.
 * - `exited`: gone.
 */
export type ChildState =
  'starting' | 'failed-to-start' | 'idle' | 'busy' | 'aborting' | 'exiting' | 'killed' | 'exited'

export interface PoolChildOptions {
  spawn: ChildSpawner
  handlersUrl: string
  reportMemory: boolean
  startTimeoutMs: number
  killGraceMs: number
  /** Where the child's messages, output lines and exit go. */
  onMessage: (child: PoolChild, message: ChildMessage) => void
  onLine: (child: PoolChild, stream: 'stdout' | 'stderr', line: string) => void
  onExit: (child: PoolChild, exit: ChildExit) => void
}

/**
 * One child of a ChildPool: its state, the attempts it holds and its one timer, whose purpose the
 * state names. The pool decides which attempt goes where; the child only keeps its own state
 * machine consistent (every transition clears the previous deadline) and sends its messages.
 */
export class PoolChild {
  readonly handle: ChildHandle
  private current: ChildState = 'starting'
  private timer: NodeJS.Timeout | null = null
  private readonly killGraceMs: number
  jobsRun = 0
  /** The attempt it runs. */
  attempt: Attempt | null = null
  /**
   * The attempts handed ahead (pipelining), oldest first: sent while `attempt` runs, so the child
   * starts the first as soon as it sent `attempt`'s outcome, without waiting a round trip for it,
   * and the next after that one's. None has started until the outcome before it arrives; if the
   * child dies first, they go to other children.
   */
  readonly ahead: Attempt[] = []
  /** Retire it once it is free: it ran its last job, or an aborted handler may linger in it. */
  worn = false
  /**
   * The job that ran last: output arrives on its own stream, and can trail the outcome message,
   * so lines seen while the child is idle are most likely that job's.
   */
  lastJobId: string | null = null
  stderrTail: string[] = []
  /** Why it failed to start, when it said so (or timed out). */
  loadError: string | null = null

  constructor(options: PoolChildOptions) {
    this.killGraceMs = options.killGraceMs
    this.handle = options.spawn({
      message: (message) => options.onMessage(this, message),
      line: (stream, line) => options.onLine(this, stream, line),
      exit: (exit) => options.onExit(this, exit),
    })
    this.enter('starting', options.startTimeoutMs, () => {
      this.loadError = `it did not load the handler module within ${options.startTimeoutMs} ms`
      this.enter('failed-to-start')
      this.handle.kill()
    })
    this.handle.send(loadMessage(options.handlersUrl, options.reportMemory))
  }

  get state(): ChildState {
    return this.current
  }

  /** Not on its way out: it counts towards the pool's size. */
  get live(): boolean {
    return this.current !== 'exiting' && this.current !== 'killed' && this.current !== 'exited'
  }

  /** Running an attempt (aborting one included). */
  get running(): boolean {
    return this.current === 'busy' || this.current === 'aborting'
  }

  /** It said `ready`: from starting to idle. False if it was not starting. */
  ready(): boolean {
    if (this.current !== 'starting') return false
    this.enter('idle')
    return true
  }

  /** It said it cannot load the module: it exits by itself, unless the module left something running. */
  loadFailed(message: string): void {
    this.loadError = message
    this.enter('failed-to-start', this.killGraceMs, () => this.kill())
  }

  /** Hands it an attempt to run now. */
  run(attempt: Attempt): void {
    this.enter('busy')
    this.begin(attempt)
    this.handle.send(runMessage(attempt.execution.job))
  }

  /** Hands it an attempt to start once the outcomes before it have left (pipelining). */
  handAhead(attempt: Attempt): void {
    this.ahead.push(attempt)
    this.handle.send(runMessage(attempt.execution.job, attempt.handOver?.startBy))
  }

  /**
   * The running attempt's outcome arrived: `attempt` is over, and the first handed ahead (if any)
   * has started. Says what ended.
   */
  outcomeArrived(): Attempt {
    const ended = this.attempt!
    this.attempt = null
    this.jobsRun++
    const next = this.ahead.shift()
    if (next !== undefined) {
      // No abort is pending any more (a killed child stays killed: its exit is on its way).
      if (this.current === 'aborting') this.enter('busy')
      this.begin(next)
      next.handOver?.started()
    }
    return ended
  }

  /** Back to idle, once free and fit to run more. */
  idle(): void {
    this.enter('idle')
  }

  /**
   * The running attempt: tells the child to abort, and kills it when it does not answer within
   * the grace period. One handed ahead: asks for it back (if it started meanwhile, it is
   * stopped when its turn comes).
   */
  abort(attempt: Attempt, reason: string): void {
    if (attempt.aborted) return
    if (this.attempt === attempt) {
      attempt.aborted = true
      this.stopRunning(attempt, reason)
    } else if (this.ahead.includes(attempt)) {
      attempt.aborted = true
      this.handle.send(withdrawMessage(attempt.execution.job.id))
    }
  }

  /** Asks for an attempt handed ahead back (for a child that fell idle, or its job recalled). */
  withdraw(attempt: Attempt): void {
    attempt.withdrawing = true
    this.handle.send(withdrawMessage(attempt.execution.job.id))
  }

  /** The last attempt handed ahead that is not already on its way back, if any. */
  get lastAhead(): Attempt | null {
    for (let i = this.ahead.length - 1; i >= 0; i--) {
      const attempt = this.ahead[i]!
      if (!attempt.withdrawing && !attempt.aborted) return attempt
    }
    return null
  }

  /** An attempt handed ahead came back unstarted: which one (null if it is not held here). */
  withdrawn(jobId: string): Attempt | null {
    const index = this.ahead.findIndex((attempt) => attempt.execution.job.id === jobId)
    if (index === -1) return null
    return this.ahead.splice(index, 1)[0]!
  }

  /** Asks it to exit (recycling, close); kills it if it takes longer than the grace period. */
  retire(): void {
    this.enter('exiting', this.killGraceMs, () => this.handle.kill())
    this.handle.send(exitMessage())
  }

  /** It exited: no deadline is left. */
  exited(): void {
    this.enter('exited')
  }

  /** `attempt` is now the one running in the child. */
  private begin(attempt: Attempt): void {
    this.attempt = attempt
    this.lastJobId = attempt.execution.job.id
    // The tail describes this attempt's crash, not an earlier job's noise.
    this.stderrTail = []
    if (attempt.aborted) this.stopRunning(attempt, 'aborted')
  }

  private stopRunning(attempt: Attempt, reason: string): void {
    this.handle.send(abortMessage(attempt.execution.job.id, reason))
    this.enter('aborting', this.killGraceMs, () => this.kill())
  }

  private kill(): void {
    if (this.current !== 'failed-to-start') this.enter('killed')
    this.handle.kill()
  }

  /** Moves to `state`, dropping the previous deadline; with `afterMs`, `onDeadline` runs unless it leaves first. */
  private enter(state: ChildState, afterMs?: number, onDeadline?: () => void): void {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
    this.current = state
    if (afterMs !== undefined && onDeadline !== undefined) {
      this.timer = setTimeout(() => {
        this.timer = null
        onDeadline()
      }, afterMs)
    }
  }
}
