/**
 * Retry delays: exponential growth with "equal jitter" (half fixed, half random), so retries of
 * jobs that failed together spread out instead of returning as a herd, and no retry comes sooner
 * than half its nominal delay.
 */

export interface BackoffOptions {
  /** Nominal delay before the second attempt. Default 1 s. */
  baseMs?: number
  /** Growth per attempt. Default 2. */
  factor?: number
  /** Upper bound of the nominal delay. Default 6 h: 25 attempts then span about three days. */
  maxMs?: number
}

export const DEFAULT_BACKOFF: Required<BackoffOptions> = { baseMs: 1000, factor: 2, maxMs: 6 * 3600 * 1000 }

/**
 * The delay after failed attempt number `attempt` (1 for the first).
 * `random` returns a number in [0, 1); tests pass a fixed one.
 */
export function backoffMs(
  attempt: number,
  options: BackoffOptions = {},
  random: () => number = Math.random,
): number {
  const { baseMs, factor, maxMs } = { ...DEFAULT_BACKOFF, ...options }
  const exponent = Math.max(0, attempt - 1)
  const nominal = Math.min(maxMs, baseMs * factor ** exponent)
  const half = nominal / 2
  return Math.round(half + random() * half)
}
