/**
 * One reading of the store shared by every open page: a page gets the last one at once, and a
 * reading older than `maxAgeMs` is replaced in the background (one at a time), so no page waits
 * for a count however long it takes on a big table, and however many tabs are open the store is
 * read at most once per `maxAgeMs` for them. The pages show when their counts were taken. Only
 * the first reading, and the one after forget(), is waited for; a reading that fails is passed on
 * to the page that waited for it, or, in the background, tried again at the next ask.
 */
export class SharedReading<T> {
  private value: { at: number; data: T; tookMs: number } | null = null
  private reading: Promise<T> | null = null

  /**
   * `maxAgeMs`: how old a reading may be served before it is replaced. A reading that took long
   * is kept longer, so that readings take at most `busyShare` of the store's time: a count over
   * 1,000,000 PostgreSQL rows takes 0.8 s (bench dashboard-lists), and read every second for an
   * open overview it would keep a core of the database busy; at 5 % it is read every 16 s.
   */
  constructor(
    private readonly read: () => Promise<T>,
    private readonly maxAgeMs: number,
    private readonly busyShare = 0.05,
  ) {}

  get(now = Date.now()): Promise<T> {
    const value = this.value
    if (value !== null && now - value.at < Math.max(this.maxAgeMs, value.tookMs / this.busyShare)) {
      return Promise.resolve(value.data)
    }
    const started = Date.now()
    this.reading ??= this.read()
      .then((data) => {
        const at = Date.now()
        this.value = { at, data, tookMs: at - started }
        return data
      })
      .finally(() => (this.reading = null))
    if (value === null) return this.reading
    this.reading.catch(() => undefined)
    return Promise.resolve(value.data)
  }

  /** After a change made here: the next page waits for a reading that shows it. */
  forget(): void {
    this.value = null
  }
}
