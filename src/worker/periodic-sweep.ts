/**
 * What the worker's background sweeps share (the recoverer, the retention sweeper): one sweep at a
 * time (a sweep asked for while one runs is that one), a timer that starts the next, and waits
 * inside a sweep that stop() ends at once, so a stopping worker never waits for a timer.
 */
export abstract class PeriodicSweep<Result> {
  protected stopped = false
  private timer: NodeJS.Timeout | null = null
  private sweeping: Promise<Result> | null = null
  /** Ends a sweep's current wait early (stop). */
  private wakeWait: (() => void) | null = null

  constructor(private readonly onError: (error: unknown) => void) {}

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
    this.wakeWait?.()
    await this.sweeping?.catch(() => undefined)
  }

  /** One sweep now (the one running, if any). */
  runOnce(): Promise<Result> {
    this.sweeping ??= this.sweep().finally(() => (this.sweeping = null))
    return this.sweeping
  }

  protected abstract sweep(): Promise<Result>

  /** Starts sweeping: the first sweep after `delayMs`, each next one after what `nextDelayMs` says. */
  protected schedule(delayMs: number, nextDelayMs: () => number): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.timer = null
      this.runOnce()
        .catch((error: unknown) => this.onError(error))
        .finally(() => this.schedule(nextDelayMs(), nextDelayMs))
    }, delayMs)
  }

  /** Waits `ms` (at least 1), or until stop(). */
  protected wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => {
          this.wakeWait = null
          resolve()
        },
        Math.max(1, ms),
      )
      this.wakeWait = () => {
        clearTimeout(timer)
        this.wakeWait = null
        resolve()
      }
    })
  }
}

/** An interval give or take a tenth, so that workers started together do not sweep together. */
export function jittered(intervalMs: number): number {
  return intervalMs * (0.9 + Math.random() * 0.2)
}
