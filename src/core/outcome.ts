import type { ClaimedJob, JobError, JobId } from './job.js'
import type { JobReport } from './progress.js'

/**
 * What became of one attempt. The worker decides (policy: backoff, attempts left); the store only
 * applies it, fenced by the lease token the job was claimed with, with what the handler reported
 * since the last renewal (`report`) in the same write.
 */
export type Settlement = {
  /** What the handler reported since the job's last lease renewal, written with the outcome. */
  report?: JobReport
} & (
  | { kind: 'completed'; id: JobId; leaseToken: string; result?: unknown }
  /** Another attempt at `runAt`. */
  | { kind: 'retry'; id: JobId; leaseToken: string; runAt: number; error: JobError }
  | { kind: 'dead'; id: JobId; leaseToken: string; error: JobError }
  /** Run again at `runAt` without counting this attempt. */
  | { kind: 'snoozed'; id: JobId; leaseToken: string; runAt: number }
)

export type SettlementKind = Settlement['kind']

/**
 * Gives a claimed job back unrun: ready again in its old place in line (its own runAt), the
 * attempt not counted. For jobs held ahead by a stopping worker, and jobs delivered to a wait
 * that had already ended.
 */
export function giveBack(job: ClaimedJob): Settlement {
  return { kind: 'snoozed', id: job.id, leaseToken: job.leaseToken, runAt: job.runAt }
}
