/**
 * The worker's policy: what an ended attempt becomes in the store. Executors only report what
 * happened (completed, failed, snoozed, permanent, aborted); whether that means another attempt,
 * when, or the end of the job is decided here, and nowhere else. Pure: no clock, no I/O.
 */
import { retryDelayMs, type BackoffOptions } from '../core/backoff.js'
import type { ClaimedJob, JobError } from '../core/job.js'
import type { Settlement } from '../core/outcome.js'
import { serializePayload } from '../core/payload.js'
import type { ExecutionOutcome } from './executors/executor.js'

/** Why the worker aborted a running attempt: decides what is written about it. */
export type AbortCause = 'timeout' | 'shutdown' | 'lease-lost'

/** One attempt as it ended. */
export interface EndedAttempt {
  job: ClaimedJob
  outcome: ExecutionOutcome
  /** Why the worker aborted it, if it did; an attempt aborted without one was stopped by shutdown. */
  abortCause: AbortCause | null
  /** The attempt's time limit, for the message of a timeout. */
  timeoutMs: number | null
}

export interface RetryPolicyOptions {
  now: number
  backoff?: BackoffOptions
  /** The backoff's jitter; for tests. Default Math.random. */
  random?: () => number
}

/**
 * The settlement to write about an ended attempt: completed, a retry at `now + backoff(attempt)`
 * while attempts are left (else dead, with the error), snoozed (the attempt given back), or dead
 * at once. Null when nothing may be written: the worker lost the job's lease.
 */
export function decideSettlement(attempt: EndedAttempt, options: RetryPolicyOptions): Settlement | null {
  const { job, outcome } = attempt
  const { now } = options
  const base = { id: job.id, leaseToken: job.leaseToken }
  switch (outcome.kind) {
    case 'completed':
      if (outcome.result !== undefined) {
        try {
          serializePayload(outcome.result, 'result')
        } catch (error) {
          // Retrying would give the same result again: the job is dead, with the reason.
          const message = `the handler completed but its result cannot be stored: ${(error as Error).message}`
          return { ...base, kind: 'dead', error: { kind: 'permanent', message } }
        }
      }
      return { ...base, kind: 'completed', result: outcome.result }
    case 'snoozed':
      return { ...base, kind: 'snoozed', runAt: now + outcome.delayMs }
    case 'permanent':
      return { ...base, kind: 'dead', error: outcome.error }
    case 'failed':
      return failure(job, outcome.error, options)
    case 'aborted':
      switch (attempt.abortCause) {
        case 'timeout': {
          const message = `timed out after ${attempt.timeoutMs} ms`
          const error: JobError = { kind: 'timeout', message, timeoutMs: attempt.timeoutMs! }
          // An isolating executor had to kill the child that ignored the abort: say how.
          const { killed } = outcome
          if (killed !== undefined) {
            const { exitCode, signal, stderrTail } = killed
            Object.assign(error, { message: `${message}; ${killed.message}`, exitCode, signal, stderrTail })
          }
          return failure(job, error, options)
        }
        case 'lease-lost':
          return null
        default:
          // Shutdown: back to ready at once, without using the attempt.
          return { ...base, kind: 'snoozed', runAt: now }
      }
  }
}

/** A failed attempt: another one after the backoff (the job's own, else the worker's) while attempts are left, else the end. */
function failure(job: ClaimedJob, error: JobError, options: RetryPolicyOptions): Settlement {
  const base = { id: job.id, leaseToken: job.leaseToken }
  if (job.attempts >= job.maxAttempts) return { ...base, kind: 'dead', error }
  const runAt = options.now + retryDelayMs(job.attempts, job.backoff, options.backoff, options.random)
  return { ...base, kind: 'retry', runAt, error }
}
