import type { RecoverResult, Store } from '../store/store.js'

export interface RecovererOptions {
  store: Store
  intervalMs: number
  onDone: (result: RecoverResult) => void
  onError: (error: unknown) => void
}

/**
 * Puts back jobs whose worker died or froze: their lease expired. Every worker runs one; the
 * sweep is idempotent, so many of them at once do no harm. It sweeps at start, then every
 * interval with a little jitter, so workers started together do not sweep together.
 */
export class Recoverer {
  private timer: NodeJS.Timeout | null = null
  private sweeping: Promise<RecoverResult> | null = null
  private stopped = false

  constructor(private readonly options: RecovererOptions) {}

  start(): void {
    this.stopped = false
    this.schedule(0)
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
    await this.sweeping?.catch(() => undefined)
  }

  /** One sweep now, until nothing expired is left. */
  runOnce(): Promise<RecoverResult> {
    this.sweeping ??= this.sweep().finally(() => (this.sweeping = null))
    return this.sweeping
  }

  private async sweep(): Promise<RecoverResult> {
    const total: RecoverResult = { retried: [], dead: [] }
    for (;;) {
      const { retried, dead } = await this.options.store.recoverExpired()
      total.retried.push(...retried)
      total.dead.push(...dead)
      if (retried.length + dead.length === 0 || this.stopped) break
    }
    this.options.onDone(total)
    return total
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.timer = null
      this.runOnce()
        .catch((error: unknown) => this.options.onError(error))
        .finally(() => this.schedule(this.options.intervalMs * (0.9 + Math.random() * 0.2)))
    }, delayMs)
  }
}
