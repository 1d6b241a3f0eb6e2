import { monotonicMs } from './monotonic.js'

/** How a TickBatcher cuts and overlaps its flushes. */
export interface BatchLimits {
  /**
   * Items per flush at most. A caller's own items (one submitMany) are never split, so a flush
   * holding a single larger submission may exceed it. Default: no limit.
   */
  maxItems?: number
  /**
   * Bytes per flush at most, as the callers weigh their items (submit's `bytes`), under the same
   * rule as maxItems: a submission is never split, so one larger than this goes in a flush of its
   * own. Default: no limit.
   */
  maxBytes?: number
  /** Flushes running at once at most. Default 1: each flush waits for the one before. */
  maxInFlight?: number
  /**
   * Calls made while a flush's results are handed out (a caller that awaits each call before
   * making the next) flush as soon as the hand-out is over, before the event loop turns, rather
   * than at its next turn, for up to this many milliseconds after the loop last turned for a
   * flush; then the loop turns, so that timers and I/O never wait longer than about this.
   * Default 0: every flush waits for the loop's next turn.
   */
  followUpWindowMs?: number
}

/**
 * Gathers the calls made before the event loop turns into batches for `flush` calls — one
 * transaction, one fsync, one round trip each — and hands each caller its own results. While
 * `maxInFlight` flushes are running, new calls gather for the next one, so batches grow with the
 * load by themselves. A large gathering is cut into flushes of `maxItems` that run side by side
 * (up to `maxInFlight`), so encoding one batch overlaps the store's work on the one before; it is
 * cut by `maxBytes` too, when the callers say what their items weigh. A flush that is full starts
 * at once, without waiting for the end of the tick.
 *
 * Each caller's promise settles with the flush that carried its items: it resolves only once that
 * flush succeeded, and a failed flush rejects every caller in it. Flushes start in submission
 * order; whether they also finish in it is up to the store.
 *
 * A caller that awaits each call in turn makes its next call while the last flush's results are
 * handed out, in the microtasks that follow it. Waiting for the loop's next turn there gathers
 * nobody else's calls (every caller resumed by that flush has made its call by the end of those
 * microtasks), yet a turn after a synchronous flush costs more than the turn itself: about 15 µs
 * after SQLite's fsync, against 3 µs when nothing blocked (a probe of fsync then setImmediate).
 * With followUpWindowMs, such calls flush once the microtasks are done (process.nextTick runs
 * only when the queue of microtasks is empty), still before any I/O callback or timer could add
 * more.
 */
export class TickBatcher<In, Out> {
  private pending: Pending<In, Out>[] = []
  /** Items in `pending`, and their bytes. */
  private pendingItems = 0
  private pendingBytes = 0
  private scheduled = false
  private readonly inFlight = new Set<Promise<void>>()
  private readonly maxItems: number
  private readonly maxBytes: number
  private readonly maxInFlight: number
  private readonly followUpWindowMs: number
  /** Whether a flush's results are being handed out: until the microtasks after them are done. */
  private handingOut = false
  /** Whether the pending calls flush when the hand-out ends rather than at the loop's next turn. */
  private followUpQueued = false
  /** When the event loop last turned for a flush (monotonicMs), for followUpWindowMs. */
  private lastTurnAt = -Infinity

  /** `flush` must return one result per item, in order. */
  constructor(
    private readonly flush: (items: readonly In[]) => Promise<Out[]>,
    { maxItems = Infinity, maxBytes = Infinity, maxInFlight = 1, followUpWindowMs = 0 }: BatchLimits = {},
  ) {
    if (!(maxItems >= 1)) throw new RangeError(`maxItems must be at least 1 (got ${maxItems})`)
    if (!(maxBytes >= 1)) throw new RangeError(`maxBytes must be at least 1 (got ${maxBytes})`)
    if (!Number.isInteger(maxInFlight) || maxInFlight < 1) {
      throw new RangeError(`maxInFlight must be a positive integer (got ${maxInFlight})`)
    }
    this.maxItems = maxItems
    this.maxBytes = maxBytes
    this.maxInFlight = maxInFlight
    if (!(followUpWindowMs >= 0)) {
      throw new RangeError(`followUpWindowMs must be 0 or more (got ${followUpWindowMs})`)
    }
    this.followUpWindowMs = followUpWindowMs
  }

  /** One item: the common case, kept free of per-call arrays. `bytes`: its weight for maxBytes. */
  submit(item: In, bytes = 0): Promise<Out> {
    return new Promise((resolve, reject) => this.add({ item, bytes, resolve, reject }))
  }

  /** Items that go in one flush together. `bytes`: their weight for maxBytes, all of them. */
  submitMany(items: readonly In[], bytes = 0): Promise<Out[]> {
    return new Promise((resolve, reject) => this.add({ items, bytes, resolve, reject }))
  }

  /** Whether calls are waiting for a flush that has not started yet. */
  get hasPending(): boolean {
    return this.pending.length > 0
  }

  /** Resolves once everything submitted so far has been flushed (or failed). */
  async drain(): Promise<void> {
    while (this.scheduled || this.inFlight.size > 0) {
      if (this.inFlight.size > 0) await Promise.race(this.inFlight)
      else await new Promise((resolve) => setImmediate(resolve))
    }
  }

  private add(entry: Pending<In, Out>): void {
    this.pending.push(entry)
    this.pendingItems += sizeOf(entry)
    this.pendingBytes += entry.bytes
    // A full flush goes now, not at the end of the tick: the store works on it while the caller
    // is still submitting the rest. 10,000 enqueues made in one loop spent 55-80 ms being
    // validated before the first of their scripts left for Redis.
    while (
      (this.pendingItems >= this.maxItems || this.pendingBytes >= this.maxBytes) &&
      this.inFlight.size < this.maxInFlight
    ) {
      this.startFlush()
    }
    if (this.pending.length > 0 && !this.scheduled) {
      this.scheduled = true
      if (this.handingOut && monotonicMs() - this.lastTurnAt < this.followUpWindowMs) {
        this.followUpQueued = true
      } else {
        setImmediate(() => {
          this.lastTurnAt = monotonicMs()
          void this.flushPending()
        })
      }
    }
  }

  /** After the microtasks that followed a hand-out: the calls they made flush now. */
  private readonly endHandOut = (): void => {
    this.handingOut = false
    if (this.followUpQueued) {
      this.followUpQueued = false
      void this.flushPending()
    }
  }

  private async flushPending(): Promise<void> {
    while (this.pending.length > 0) {
      // All flushes busy: what is pending goes as soon as one ends, with whatever joins it meanwhile.
      while (this.inFlight.size >= this.maxInFlight) await Promise.race(this.inFlight)
      if (this.pending.length > 0) this.startFlush()
    }
    this.scheduled = false
  }

  private startFlush(): void {
    const run = this.run(this.takeChunk()).finally(() => this.inFlight.delete(run))
    this.inFlight.add(run)
  }

  /** The first pending entries, up to maxItems items and maxBytes bytes (at least one entry). */
  private takeChunk(): Pending<In, Out>[] {
    let count = 0
    let bytes = 0
    let taken = 0
    while (taken < this.pending.length) {
      const entry = this.pending[taken]!
      const size = sizeOf(entry)
      if (taken > 0 && (count + size > this.maxItems || bytes + entry.bytes > this.maxBytes)) break
      count += size
      bytes += entry.bytes
      taken++
    }
    this.pendingItems -= count
    this.pendingBytes -= bytes
    return this.pending.splice(0, taken)
  }

  private async run(entries: Pending<In, Out>[]): Promise<void> {
    let items: readonly In[]
    if (entries.length === 1) {
      const only = entries[0]!
      items = only.items ?? [only.item]
    } else {
      const all: In[] = []
      for (const entry of entries) {
        if (entry.items === undefined) all.push(entry.item)
        else for (const item of entry.items) all.push(item)
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
    if (this.followUpWindowMs > 0 && !this.handingOut) {
      this.handingOut = true
      process.nextTick(this.endHandOut)
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
  | {
      item: In
      items?: undefined
      bytes: number
      resolve: (result: Out) => void
      reject: (error: unknown) => void
    }
  | {
      items: readonly In[]
      bytes: number
      resolve: (results: Out[]) => void
      reject: (error: unknown) => void
    }

function sizeOf<In, Out>(entry: Pending<In, Out>): number {
  return entry.items === undefined ? 1 : entry.items.length
}
