import type { JobError, JobId } from './job.js'

/**
 * What became of one attempt. The worker decides (policy: backoff, attempts left); the store only
 * applies it, fenced by the lease token the job was claimed with.
 */
export type Settlement =
  | { kind: 'completed'; id: JobId; leaseToken: string; result?: unknown }
  /** Another attempt at `runAt`. */
  | { kind: 'retry'; id: JobId; leaseToken: string; runAt: number; error: JobError }
  | { kind: 'dead'; id: JobId; leaseToken: string; error: JobError }
  /** Run again at `runAt` without counting this attempt. */
  | { kind: 'snoozed'; id: JobId; leaseToken: string; runAt: number }

export type SettlementKind = Settlement['kind']
