import type { Store } from '../store/store.js'
import { monotonicMs } from '../core/monotonic.js'

export interface LeaseKeeperOptions {
  store: Store
  leaseMs: number
  /** The leases held now. */
  leases: () => { id: string; leaseToken: string }[]
  /** A job whose lease this worker no longer holds: cancelled, or recovered after it expired. */
  onLost: (id: string) => void
  /** A lease renewed by a call sent at `sentAt` (monotonicMs()). */
  onRenewed: (id: string, sentAt: number) => void
  /** A lease not renewed because the job's record is locked elsewhere: still this worker's. */
  onLocked: (id: string) => void
  onError: (error: unknown) => void
}

/**
 * Renews the leases of every running job in one store call, every third of the lease, so a
 * job keeps its lease through two failed renewals. Runs only while jobs run.
 */
export class LeaseKeeper {
  private timer: NodeJS.Timeout | null = null
  private renewing = false

  constructor(private readonly options: LeaseKeeperOptions) {}

  start(): void {
    if (this.timer !== null) return
    this.timer = setInterval(() => void this.renewAll(), Math.max(1, Math.floor(this.options.leaseMs / 3)))
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
  }

  async renewAll(): Promise<void> {
    if (this.renewing) return // a slow store: do not stack renewals
    const leases = this.options.leases()
    if (leases.length === 0) return
    this.renewing = true
    try {
      const sentAt = monotonicMs()
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
    }
  }
}
