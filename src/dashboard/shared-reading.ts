/**
 * One reading of the store shared by every open page: a page that polls asks for it, and gets the
 * last one while it is younger than `maxAgeMs`, or the one being read. However many tabs are open,
 * the store is read at most once per `maxAgeMs` for it (the count queries users of other
 * dashboards see crawl are made once, not once per viewer).
 */
export class SharedReading<T> {
  private value: { at: number; data: T } | null = null
  private reading: Promise<T> | null = null

  constructor(
    private readonly read: () => Promise<T>,
    private readonly maxAgeMs: number,
  ) {}

  get(now = Date.now()): Promise<T> {
    if (this.value !== null && now - this.value.at < this.maxAgeMs) return Promise.resolve(this.value.data)
    this.reading ??= this.read()
      .then((data) => {
        this.value = { at: Date.now(), data }
        return data
      })
      .finally(() => (this.reading = null))
    return this.reading
  }

  /** After a change made here: the next page shows it rather than the reading before. */
  forget(): void {
    this.value = null
  }
}
