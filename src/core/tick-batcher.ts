/**
 * Gathers the calls made before the event loop turns into one batch for one `flush` call — one
 * transaction, one fsync, one round trip — and hands each caller its own results. While a flush
 * is in flight, new calls gather for the next one, so batches grow with the load by themselves.
 *
 * Each caller's promise settles with the flush that carried its items: it resolves only once that
 * flush succeeded, and a failed flush rejects every caller in it.
 */
export class TickBatcher<In, Out> {
  private pending: Pending<In, Out>[] = []
  private pendingItemCount = 0
  private scheduled = false
  private inFlight: Promise<void> | null = null

  /** `flush` must return one result per item, in order. */
  constructor(private readonly flush: (items: readonly In[]) => Promise<Out[]>) {}

  /** One item: the common case, kept free of per-call arrays. */
  submit(item: In): Promise<Out> {
    return new Promise((resolve, reject) => this.add({ item, resolve, reject }, 1))
  }

  submitMany(items: readonly In[]): Promise<Out[]> {
    return new Promise((resolve, reject) => this.add({ items, resolve, reject }, items.length))
  }

  /** Resolves once everything submitted so far has been flushed (or failed). */
  async drain(): Promise<void> {
    while (this.scheduled || this.inFlight !== null) {
      if (this.inFlight !== null) await this.inFlight
      else await new Promise((resolve) => setImmediate(resolve))
    }
  }

  private add(entry: Pending<In, Out>, itemCount: number): void {
    this.pending.push(entry)
    this.pendingItemCount += itemCount
    if (!this.scheduled) {
      this.scheduled = true
      setImmediate(() => void this.flushPending())
    }
  }

  private async flushPending(): Promise<void> {
    // A flush is running: this batch goes as soon as it ends.
    while (this.inFlight !== null) await this.inFlight
    this.scheduled = false
    const entries = this.pending
    const itemCount = this.pendingItemCount
    this.pending = []
    this.pendingItemCount = 0
    if (entries.length === 0) return
    const run = this.run(entries, itemCount)
    this.inFlight = run
    try {
      await run
    } finally {
      if (this.inFlight === run) this.inFlight = null
    }
  }

  private async run(entries: Pending<In, Out>[], itemCount: number): Promise<void> {
    let items: readonly In[]
    if (entries.length === 1) {
      const only = entries[0]!
      items = only.items ?? [only.item]
    } else {
      const all: In[] = new Array(itemCount)
      let i = 0
      for (const entry of entries) {
        if (entry.items === undefined) all[i++] = entry.item
        else for (const item of entry.items) all[i++] = item
      }
      items = all
    }
    let results: Out[]
    try {
      results = await this.flush(items)
    } catch (error) {
      for (const entry of entries) entry.reject(error)
      return
    }
    let offset = 0
    for (const entry of entries) {
      if (entry.items === undefined) {
        entry.resolve(results[offset++]!)
      } else {
        entry.resolve(results.slice(offset, offset + entry.items.length))
        offset += entry.items.length
      }
    }
  }
}

type Pending<In, Out> =
  | { item: In; items?: undefined; resolve: (result: Out) => void; reject: (error: unknown) => void }
  | { items: readonly In[]; resolve: (results: Out[]) => void; reject: (error: unknown) => void }
