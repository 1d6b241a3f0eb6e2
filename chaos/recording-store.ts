/**
 * A Store that passes every call through and writes what the worker's hot-path calls were told:
 * each claim (the lease token and the expiry the store gave), each renewal and each settlement
 * with its per-item result, and when the call was sent and answered. The checker decides from
 * these whether two runs of a job overlapped while a lease was valid: it reasons from the store's
 * own answers, not from assumptions about how fast a starved process runs.
 */
import type { ClaimedJob } from '../src/core/job.js'
import { wrapStore, type SettleResult, type Store } from '../src/index.js'
import type { Settlement } from '../src/core/outcome.js'
import type { History } from './history.js'

/** A record in a worker's history. Times are this host's epoch ms: `t0` sent, `t1` answered. */
export type WorkerRecord =
  | { e: 'hello'; pid: number; workerId: string; t: number }
  | {
      e: 'start'
      id: string
      token: string
      attempt: number
      maxAttempts: number
      /** The expiry the claim set, on the store's clock: claim time + lease. */
      leaseUntil: number
      t0: number
      t1: number
    }
  | { e: 'renew'; id: string; token: string; result: SettleResult; t0: number; t1: number }
  | {
      e: 'settle'
      id: string
      token: string
      kind: Settlement['kind']
      result: SettleResult
      t0: number
      t1: number
    }
  /** The worker gave the job up without a settlement: a renewal said its lease was lost. */
  | { e: 'lost'; id: string; token: string; t: number }
  | { e: 'recover'; retried: string[]; dead: string[]; t0: number; t1: number }
  | { e: 'stopped'; t: number }

/** The store, each call passed through, with its hot-path answers written to the history. */
export function recordingStore(inner: Store, history: History): Store {
  /** Jobs handed by waitForWork and not taken yet, by lease token. */
  const delivered = new Map<string, ClaimedJob>()

  const recordClaims = (jobs: readonly ClaimedJob[], t0: number, t1: number): void => {
    for (const job of jobs) {
      history.write({
        e: 'start',
        id: job.id,
        token: job.leaseToken,
        attempt: job.attempts,
        maxAttempts: job.maxAttempts,
        leaseUntil: job.leaseExpiresAt,
        t0,
        t1,
      })
    }
  }

  const recordSettlements = (
    settlements: readonly Settlement[],
    results: readonly SettleResult[],
    t0: number,
    t1: number,
  ): void => {
    settlements.forEach(({ id, leaseToken, kind }, i) =>
      history.write({ e: 'settle', id, token: leaseToken, kind, result: results[i]!, t0, t1 }),
    )
  }

  return wrapStore(inner, {
    async around(call) {
      const t0 = Date.now()
      switch (call.method) {
        case 'claim': {
          const jobs = await call.next()
          recordClaims(jobs, t0, Date.now())
          return jobs
        }
        case 'waitForWork': {
          // Jobs an enqueue handed a waiting worker start only once it took them (renew, delivered).
          const result = await call.next()
          for (const job of result.jobs) delivered.set(job.leaseToken, job)
          return result
        }
        case 'settle': {
          const result = await call.next()
          const t1 = Date.now()
          recordSettlements(call.params.settlements, result.settled, t0, t1)
          recordClaims(result.claimed, t0, t1)
          return result
        }
        case 'renew': {
          const results = await call.next()
          const t1 = Date.now()
          if (call.params.delivered === true) {
            // A delivered job taken is a claim, sent when the take was: its lease ran at least to
            // the delivery's expiry, and the take renewed it from the moment it was sent. One not
            // taken never ran here.
            call.params.leases.forEach(({ leaseToken }, i) => {
              const job = delivered.get(leaseToken)
              delivered.delete(leaseToken)
              if (job === undefined || results[i] !== 'ok') return
              recordClaims([job], t0, t1)
              history.write({ e: 'renew', id: job.id, token: leaseToken, result: 'ok', t0, t1 })
            })
          } else {
            call.params.leases.forEach(({ id, leaseToken }, i) =>
              history.write({ e: 'renew', id, token: leaseToken, result: results[i]!, t0, t1 }),
            )
          }
          return results
        }
        case 'recoverExpired': {
          const result = await call.next()
          if (result.retried.length + result.dead.length > 0) {
            history.write({ e: 'recover', retried: result.retried, dead: result.dead, t0, t1: Date.now() })
          }
          return result
        }
        default:
          // The rest passes through unrecorded.
          return call.next()
      }
    },
  })
}
