import type { RenewLease, Store } from '../store/store.js'
import { monotonicMs } from '../core/monotonic.js'

export interface LeaseKeeperOptions {
  store: Store
  leaseMs: number
  /** The leases held now, each with what its handler reported since the last renewal. */
  leases: () => RenewLease[]
  /** A job whose lease this worker no longer holds: cancelled, or recovered after it expired. */
  onLost: (id: string) => void
  /** A lease renewed by a call sent at `sentAt` (monotonicMs()). */
  onRenewed: (id: string, sentAt: number) => void
  /** A lease not renewed because the job's record is locked elsewhere: still this worker's. */
  onLocked: (id: string) => void
  onError: (error: unknown) => void
}

/**
 * How soon after the last renewal a handler's report brings the next one: its progress and logs
 * ride on renewals (JobReports), and every third of a lease (10 s for the default 30 s lease)
 * would leave a watcher waiting that long. At most one extra renewal a second, for all the jobs.
 */
export const REPORT_RENEWAL_MS = 1000

/**
 * Renews the leases of every running job in one store call, every third of the lease, so a
 * job keeps its lease through two failed renewals, and sooner when a handler reported progress
 * (renewSoon). Runs only while jobs run.
 */
export class LeaseKeeper {
  private timer: NodeJS.Timeout | null = null
  /** The renewal renewSoon asked for. */
  private soonTimer: NodeJS.Timeout | null = null
  private renewing = false
  /** renewSoon came while a renewal was on its way: another follows it. */
  private renewAgain = false
  /** monotonicMs() of the last renewal sent. */
  private lastSentAt = -Infinity

  constructor(private readonly options: LeaseKeeperOptions) {}

  start(): void {
    if (this.timer !== null) return
    this.timer = setInterval(() => void this.renewAll(), Math.max(1, Math.floor(this.options.leaseMs / 3)))
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer)
    if (this.soonTimer !== null) clearTimeout(this.soonTimer)
    this.timer = null
    this.soonTimer = null
    this.renewAgain = false
  }

  /**
   * A handler reported something: renew (which carries it) REPORT_RENEWAL_MS after the last
   * renewal, or now if that was longer ago; reports until then ride on the same call.
   */
  renewSoon(): void {
    if (this.timer === null || this.soonTimer !== null) return
    if (this.renewing) {
      this.renewAgain = true
      return
    }
    const waitMs = Math.max(0, this.lastSentAt + REPORT_RENEWAL_MS - monotonicMs())
    this.soonTimer = setTimeout(() => {
      this.soonTimer = null
      void this.renewAll()
    }, waitMs)
  }

  async renewAll(): Promise<void> {
    if (this.renewing) return // a slow store: do not stack renewals
    const leases = this.options.leases()
    if (leases.length === 0) return
    this.renewing = true
    try {
      const sentAt = monotonicMs()
      this.lastSentAt = sentAt
      const results = await this.options.store.renew({ leases, leaseMs: this.options.leaseMs })
      results.forEach((result, i) => {
        const { id } = leases[i]!
        if (result === 'lease_lost') this.options.onLost(id)
        else if (result === 'locked') this.options.onLocked(id)
        else this.options.onRenewed(id, sentAt)
      })
    } catch (error) {
      this.options.onError(error)
    } finally {
      this.renewing = false
      if (this.renewAgain) {
        this.renewAgain = false
        this.renewSoon()
      }
    }
  }
}
