/**
 * How long a unique key holds (docs/uniqueness.md), as every store keeps it beside the key: the
 * transition that frees it ('finished' or 'started'; none for a key held until the purge) and a
 * throttle's end. Each store frees the key in the write that makes that transition; a throttle's
 * key is freed by the first enqueue of the key that finds its end passed.
 */
import type { NewJob } from '../../core/job.js'

/** The transition that frees the job's key, or null: held until the purge (or a throttle's end). */
export function uniqueUntilOf(job: NewJob): 'finished' | 'started' | null {
  const until = job.uniqueUntil
  return until === 'finished' || until === 'started' ? until : null
}

/** When a throttle's hold of the key ends: its window from the enqueue's instant; null for none. */
export function uniqueExpiresAtOf(job: NewJob, at: number): number | null {
  return job.uniqueForMs == null ? null : at + job.uniqueForMs
}

/** Whether a holder's throttle (its end, null for none) has let go of the key at `at`. */
export function throttleEnded(expiresAt: number | null, at: number): boolean {
  return expiresAt !== null && expiresAt <= at
}
