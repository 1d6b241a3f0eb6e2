/**
 * The store's stats for the gauges, read in the background and served from the last reading, so
 * that a scrape never waits for a count of the jobs table (a GROUP BY over every row on the SQL
 * stores). Polling starts at the first scrape (a registry nobody scrapes costs the store nothing)
 * and reads at most once per interval, one read at a time, however many scrapes come.
 */
import type { QueueStats, Store } from '../store/store.js'

export interface StatsReading {
  stats: QueueStats[]
  /** Epoch ms, by this process's clock, when the read began. */
  readAt: number
}

export class StatsPoller {
  private reading: StatsReading | null = null
  private first: Promise<void> | null = null
  private timer: NodeJS.Timeout | null = null
  private closed = false

  constructor(
    private readonly store: Store,
    private readonly intervalMs: number,
    /** A failed read: the last reading stays served, and the next read comes after the interval. */
    private readonly onError: (error: unknown) => void,
  ) {}

  /** The last reading; the first call starts polling and waits for the first read (null if it failed). */
  async latest(): Promise<StatsReading | null> {
    if (this.closed) return this.reading
    this.first ??= this.poll()
    await this.first
    return this.reading
  }

  close(): void {
    this.closed = true
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
  }

  private async poll(): Promise<void> {
    const readAt = Date.now()
    try {
      this.reading = { stats: await this.store.stats({ now: readAt }), readAt }
    } catch (error) {
      if (!this.closed) this.onError(error)
    }
    if (this.closed) return
    // Unref'd: polling never keeps a process alive that would otherwise exit.
    this.timer = setTimeout(() => void this.poll(), this.intervalMs).unref()
  }
}
