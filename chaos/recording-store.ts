/**
 * A Store that passes every call through and writes what the worker's hot-path calls were told:
 * each claim (the lease token and the expiry the store gave), each renewal and each settlement
 * with its per-item result, and when the call was sent and answered. The checker decides from
 * these whether two runs of a job overlapped while a lease was valid: it reasons from the store's
 * own answers, not from assumptions about how fast a starved process runs.
 */
import type { ClaimedJob } from '../src/core/job.js'
import type {
  CancelParams,
  ClaimParams,
  ClampLeasesParams,
  FindExpiredLeasesParams,
  FindExpiredLeasesResult,
  TakeDeliveredParams,
  EnqueueParams,
  EnqueueResult,
  Job,
  JobPage,
  ListJobsParams,
  MigrateResult,
  PurgeParams,
  QueueStats,
  RecoverParams,
  RecoverResult,
  RenewParams,
  RequestStopParams,
  RetryParams,
  SettleAndClaimParams,
  SettleAndClaimResult,
  SettleParams,
  SettleResult,
  StatsParams,
  Store,
  StoreCapabilities,
  WaitForJobsParams,
  WaitForJobsResult,
  WaitParams,
  WakeReason,
} from '../src/index.js'
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

export class RecordingStore implements Store {
  /** Jobs handed by waitForJobs and not taken yet, by lease token. */
  private readonly delivered = new Map<string, ClaimedJob>()

  constructor(
    private readonly inner: Store,
    private readonly history: History,
  ) {}

  get kind(): string {
    return this.inner.kind
  }

  get capabilities(): StoreCapabilities {
    return this.inner.capabilities
  }

  async claim(params: ClaimParams): Promise<ClaimedJob[]> {
    const t0 = Date.now()
    const jobs = await this.inner.claim(params)
    this.recordClaims(jobs, t0, Date.now())
    return jobs
  }

  /** Jobs an enqueue handed a waiting worker start only once it took them (takeDelivered). */
  async waitForJobs(params: WaitForJobsParams): Promise<WaitForJobsResult> {
    if (this.inner.waitForJobs === undefined) throw new Error(`${this.inner.kind} has no waitForJobs`)
    const result = await this.inner.waitForJobs(params)
    for (const job of result.jobs) this.delivered.set(job.leaseToken, job)
    return result
  }

  /**
   * A delivered job taken is a claim, sent when the take was: its lease ran at least to the
   * delivery's expiry, and the take renewed it from the moment it was sent. One not taken never
   * ran here.
   */
  async takeDelivered(params: TakeDeliveredParams): Promise<SettleResult[]> {
    if (this.inner.takeDelivered === undefined) throw new Error(`${this.inner.kind} has no takeDelivered`)
    const t0 = Date.now()
    const results = await this.inner.takeDelivered(params)
    const t1 = Date.now()
    params.leases.forEach(({ leaseToken }, i) => {
      const job = this.delivered.get(leaseToken)
      this.delivered.delete(leaseToken)
      if (job === undefined || results[i] !== 'ok') return
      this.recordClaims([job], t0, t1)
      this.history.write({ e: 'renew', id: job.id, token: leaseToken, result: 'ok', t0, t1 })
    })
    return results
  }

  async settle(params: SettleParams): Promise<SettleResult[]> {
    const t0 = Date.now()
    const results = await this.inner.settle(params)
    this.recordSettlements(params.settlements, results, t0, Date.now())
    return results
  }

  async settleAndClaim(params: SettleAndClaimParams): Promise<SettleAndClaimResult> {
    const t0 = Date.now()
    const result = await this.inner.settleAndClaim(params)
    const t1 = Date.now()
    this.recordSettlements(params.settlements, result.settled, t0, t1)
    this.recordClaims(result.claimed, t0, t1)
    return result
  }

  async renew(params: RenewParams): Promise<SettleResult[]> {
    const t0 = Date.now()
    const results = await this.inner.renew(params)
    const t1 = Date.now()
    params.leases.forEach(({ id, leaseToken }, i) =>
      this.history.write({ e: 'renew', id, token: leaseToken, result: results[i]!, t0, t1 }),
    )
    return results
  }

  async recoverExpired(params?: RecoverParams): Promise<RecoverResult> {
    const t0 = Date.now()
    const result = await this.inner.recoverExpired(params)
    if (result.retried.length + result.dead.length > 0) {
      this.history.write({ e: 'recover', retried: result.retried, dead: result.dead, t0, t1: Date.now() })
    }
    return result
  }

  private recordClaims(jobs: readonly ClaimedJob[], t0: number, t1: number): void {
    for (const job of jobs) {
      this.history.write({
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

  private recordSettlements(
    settlements: readonly Settlement[],
    results: readonly SettleResult[],
    t0: number,
    t1: number,
  ): void {
    settlements.forEach(({ id, leaseToken, kind }, i) =>
      this.history.write({ e: 'settle', id, token: leaseToken, kind, result: results[i]!, t0, t1 }),
    )
  }

  // The rest passes through unrecorded.
  findExpiredLeases(params?: FindExpiredLeasesParams): Promise<FindExpiredLeasesResult> {
    return this.inner.findExpiredLeases(params)
  }
  clampLeases(params?: ClampLeasesParams): Promise<number> {
    return this.inner.clampLeases(params)
  }
  migrate(): Promise<MigrateResult> {
    return this.inner.migrate()
  }
  close(): Promise<void> {
    return this.inner.close()
  }
  enqueue(params: EnqueueParams): Promise<EnqueueResult[]> {
    return this.inner.enqueue(params)
  }
  waitForWork(params: WaitParams): Promise<WakeReason> {
    return this.inner.waitForWork(params)
  }
  getJob(id: string): Promise<Job | null> {
    return this.inner.getJob(id)
  }
  listJobs(params?: ListJobsParams): Promise<JobPage> {
    return this.inner.listJobs(params)
  }
  stats(params?: StatsParams): Promise<QueueStats[]> {
    return this.inner.stats(params)
  }
  retry(params: RetryParams): Promise<number> {
    return this.inner.retry(params)
  }
  cancel(params: CancelParams): Promise<number> {
    return this.inner.cancel(params)
  }
  purge(params: PurgeParams): Promise<number> {
    return this.inner.purge(params)
  }
  requestStop(params?: RequestStopParams): Promise<void> {
    return this.inner.requestStop(params)
  }
  stopRequestedAt(): Promise<number | null> {
    return this.inner.stopRequestedAt()
  }
}
