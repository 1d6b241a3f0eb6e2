/** Time as Ferry reads it. Inject a ManualClock in tests instead of sleeping. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** A clock that moves only when told to. */
export class ManualClock implements Clock {
  private current: number

  constructor(startAt: number | Date = 0) {
    this.current = startAt instanceof Date ? startAt.getTime() : startAt
  }

  now(): number {
    return this.current
  }

  advance(ms: number): void {
    this.current += ms
  }

  set(at: number | Date): void {
    this.current = at instanceof Date ? at.getTime() : at
  }
}
