import type { WaitParams, WakeReason } from './store.js'

/**
 * How often a server store's safety net looks at the waiters' queues even when no notification
 * came: for one lost without any sign (a connection that went away unnoticed, a server that lost
 * it). Not the wake-up path.
 */
const SAFETY_NET_MS = 30_000

export interface WakeHubOptions {
  /** Called when the first waiter arrives and when the last one leaves. */
  onWaitingChange?: (waiting: boolean) => void
  /** Called every SAFETY_NET_MS while anybody waits: the store looks at the waiters' queues. */
  safetyNet?: () => void
}

interface Waiter {
  queues: ReadonlySet<string>
  finish: (reason: WakeReason) => void
}

/**
 * The in-process side of waitForWork, shared by every store: it holds the waiting workers and
 * wakes them on a notification for one of their queues, on a broadcast, at the next due time,
 * on abort, on timeout, or on close. How notifications arrive from other processes (file events,
 * LISTEN/NOTIFY, pub/sub) is the store's business; it calls notify/broadcast/armDue.
 */
export class WakeHub {
  private readonly waiters = new Set<Waiter>()
  private dueTimer: NodeJS.Timeout | null = null
  private dueAt = Infinity
  private safetyNetTimer: NodeJS.Timeout | null = null

  constructor(private readonly options: WakeHubOptions = {}) {}

  get waiting(): number {
    return this.waiters.size
  }

  /** Whether some waiter watches this queue. */
  watches(queue: string): boolean {
    for (const waiter of this.waiters) if (waiter.queues.has(queue)) return true
    return false
  }

  /** Every queue some waiter watches: what a store's safety net looks at. */
  watchedQueues(): string[] {
    const queues = new Set<string>()
    for (const waiter of this.waiters) for (const queue of waiter.queues) queues.add(queue)
    return [...queues]
  }

  wait({ queues, signal, timeoutMs }: WaitParams): Promise<WakeReason> {
    if (signal?.aborted) return Promise.resolve('aborted')
    return new Promise<WakeReason>((resolve) => {
      let timer: NodeJS.Timeout | undefined
      const onAbort = (): void => waiter.finish('aborted')
      const waiter: Waiter = {
        queues: new Set(queues),
        finish: (reason) => {
          if (!this.waiters.delete(waiter)) return
          if (timer !== undefined) clearTimeout(timer)
          signal?.removeEventListener('abort', onAbort)
          if (this.waiters.size === 0) this.waitingChanged(false)
          resolve(reason)
        },
      }
      this.waiters.add(waiter)
      if (this.waiters.size === 1) this.waitingChanged(true)
      signal?.addEventListener('abort', onAbort, { once: true })
      if (timeoutMs !== undefined) timer = setTimeout(() => waiter.finish('timeout'), Math.max(0, timeoutMs))
    })
  }

  /** Wakes the waiters watching any of these queues. */
  notify(queues: Iterable<string>): void {
    if (this.waiters.size === 0) return
    const touched = new Set(queues)
    for (const waiter of [...this.waiters]) {
      for (const queue of touched) {
        if (waiter.queues.has(queue)) {
          waiter.finish('notified')
          break
        }
      }
    }
  }

  /** Wakes every waiter: something changed and we cannot tell which queues. */
  broadcast(reason: WakeReason): void {
    for (const waiter of [...this.waiters]) waiter.finish(reason)
  }

  /** Arms the due timer for the earliest scheduled job (epoch ms), keeping an earlier one. */
  armDue(at: number | null, now: number): void {
    if (at === null || this.waiters.size === 0) return
    if (at <= now) {
      this.broadcast('due')
      return
    }
    if (at >= this.dueAt) return
    this.clearDue()
    this.dueAt = at
    // Timers fire at most 2^31 - 1 ms ahead; a later job re-arms when this one fires.
    const delay = Math.min(at - now, 2_147_483_647)
    this.dueTimer = setTimeout(() => {
      this.dueTimer = null
      this.dueAt = Infinity
      this.broadcast('due')
    }, delay)
  }

  private waitingChanged(waiting: boolean): void {
    const { onWaitingChange, safetyNet } = this.options
    if (waiting) {
      if (safetyNet !== undefined) this.safetyNetTimer = setInterval(safetyNet, SAFETY_NET_MS)
    } else {
      this.clearDue()
      if (this.safetyNetTimer !== null) clearInterval(this.safetyNetTimer)
      this.safetyNetTimer = null
    }
    onWaitingChange?.(waiting)
  }

  private clearDue(): void {
    if (this.dueTimer !== null) clearTimeout(this.dueTimer)
    this.dueTimer = null
    this.dueAt = Infinity
  }
}
