/**
 * Whether anyone subscribes, as a server store's writers ask it: one round trip would cost every
 * transition call as much as the call's own, so the answer is kept for PRESENCE_CACHE_MS. A
 * subscriber therefore waits that long after registering before it counts as heard by every
 * writer (subscribe() does, through EventChannel.presenceLagMs).
 */
export const PRESENCE_CACHE_MS = 1000

export class PresenceCache {
  private value: boolean | null = null
  private readAt = 0
  private reading: Promise<boolean> | null = null

  constructor(private readonly read: () => Promise<boolean>) {}

  get(): Promise<boolean> {
    if (this.value !== null && Date.now() - this.readAt < PRESENCE_CACHE_MS)
      return Promise.resolve(this.value)
    this.reading ??= this.read()
      .then((present) => {
        this.value = present
        this.readAt = Date.now()
        return present
      })
      .finally(() => {
        this.reading = null
      })
    return this.reading
  }

  /** This process registered a subscriber: its own writers know at once. */
  set(present: boolean): void {
    this.value = present
    this.readAt = Date.now()
  }
}
