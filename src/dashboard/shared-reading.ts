/**
 * One reading of the store shared by every open page: a page gets the last one at once, and a
 * reading older than `maxAgeMs` is replaced in the background (one at a time), so no page waits
 * for a count however long it takes on a big table, and however many tabs are open the store is
 * read at most once per `maxAgeMs` for them. The pages show when their counts were taken. Only
 * the first reading, and the one after forget(), is waited for; a reading that fails is passed on
 * to the page that waited for it, or, in the background, tried again at the next ask.
 */
export class SharedReading<T> {
  private value: { at: number; data: T } | null = null
  private reading: Promise<T> | null = null

  constructor(
    private readonly read: () => Promise<T>,
    private readonly maxAgeMs: number,
  ) {}

  get(now = Date.now()): Promise<T> {
    const value = this.value
    if (value !== null && now - value.at < this.maxAgeMs) return Promise.resolve(value.data)
    this.reading ??= this.read()
      .then((data) => {
        this.value = { at: Date.now(), data }
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
