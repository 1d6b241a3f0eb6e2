/**
 * waitForWork on PostgreSQL: the kernel's Deliveries and WakeHub, fed by the listening connection
 * (postgres-listener.ts), with the server's side of a wait: sql/wait-for-work.sql looks at the
 * waiter's queues once LISTEN is active and registers it for delivery in the same statement, an
 * enqueue claims jobs for it and sends them on this store's channel (functions/deliver.sql), and
 * jobs that came too late go back in line with a settle.
 */
import { randomBytes } from 'node:crypto'
import type pg from 'pg'

import type { ClaimedJob } from '../../core/job.js'
import type { Settlement } from '../../core/outcome.js'

import { Deliveries, type DeliveryBackend, type DeliveryWaiter } from '../kernel/delivery.js'
import { type JobRow, toClaimedRow } from '../kernel/jobs.js'
import type { ControlRecord, WaitParams, WaitResult } from '../store.js'
import { WakeHub } from '../wake-hub.js'
import { reportArrays, settlementArrays } from './postgres-encoding.js'
import { PostgresListener } from './postgres-listener.js'
import type { PostgresPool } from './postgres-pool.js'

export class PostgresWaiting implements DeliveryBackend {
  private readonly hub: WakeHub
  private readonly listener: PostgresListener
  private readonly deliveries: Deliveries
  /** This host's clock minus the server's, from the last wait-for-work query: turns a server run
   * time into a local timer. */
  private clockOffsetMs = 0
  /** The last stop request this store has seen (read at open): a different one wakes every waiter,
   * even when its notification was sent before this store listened. */
  private knownStopAt: number | null = null
  /** The schedules version as control() last read it (null before the first read): a different one
   * wakes every waiter, as a stop request does, for a change notified before this store listened. */
  private knownSchedulesVersion: number | null = null

  constructor(
    private readonly db: PostgresPool,
    config: pg.ClientConfig,
    schema: string,
  ) {
    // The safety net also brings back a listening connection that is gone.
    this.hub = new WakeHub({
      safetyNet: () => {
        // Every name: one check for all the waiters of this store, whatever their names. A queue
        // holding only jobs that its waiters do not handle wakes them once per safety-net check.
        void this.check(this.hub.watchedQueues(), undefined).catch(() => {})
        if (!this.listener.connected) void this.listener.listen().catch(() => {})
      },
    })
    // At most 6 + 48 + 9 = 63 bytes: PostgreSQL's identifier limit.
    const deliveryChannel = `ferry:${schema}:${randomBytes(4).toString('hex')}`
    this.listener = new PostgresListener(config, `ferry:${schema}`, deliveryChannel, db.server, {
      ready: (queues) => this.hub.notify(queues),
      due: (serverAt) => this.armDue(serverAt),
      anything: () => this.hub.broadcast('notified'),
      delivery: (delivery) => this.deliveries.deliver(delivery),
    })
    // The tag makes this store's waiter ids unique among every store of the schema.
    this.deliveries = new Deliveries(this.hub, this, randomBytes(8).toString('hex'))
  }

  readonly waitsForWatch = false

  get closed(): boolean {
    return this.db.closed
  }

  wait(params: WaitParams): Promise<WaitResult> {
    return this.deliveries.wait(params)
  }

  /**
   * Wakes this process's waiters of queues an enqueue made ready, at once; those elsewhere wake by
   * the NOTIFY of its commit. Not while a waiter of this process may be handed jobs: woken here,
   * before its delivery arrives (the listening connection hears of it before the wake-up of the
   * same commit), it would have to give them back.
   */
  enqueued(readyQueues: Iterable<string>): void {
    if (this.deliveries.waitingForDelivery === 0) this.hub.notify(readyQueues)
  }

  /** The control record as control() read or made it; `wake` wakes every waiter for its change. */
  controlRead(
    record: Pick<ControlRecord, 'stopRequestedAt' | 'schedulesVersion'>,
    { wake }: { wake: boolean },
  ): void {
    this.knownStopAt = record.stopRequestedAt
    this.knownSchedulesVersion = record.schedulesVersion
    if (wake) this.hub.broadcast('notified')
  }

  /**
   * Wakes every waiter of this process at once, for a change every worker must see (its
   * schedules); those of other processes wake by the NOTIFY '*' of the change's commit.
   */
  wakeAll(): void {
    this.hub.broadcast('notified')
  }

  /** Wakes every waiter with 'aborted' and ends the listening connection, whose end releases its
   * lock: from then on no enqueue hands this store jobs. Jobs handed to a waiter that closing
   * ended are back in line when this resolves. */
  async close(): Promise<void> {
    this.hub.broadcast('aborted')
    await this.listener.close()
    await this.deliveries.givenBack()
  }

  // ── the kernel's DeliveryBackend ───────────────────────────────────────────────────────────

  /**
   * Once LISTEN is active, looks at the queues once (and registers): whatever committed before
   * shows up here, whatever commits after is delivered or notified. Errors leave the waiter
   * waiting: the listening connection retries, and a store error will show in the worker's next
   * claim.
   */
  watch(
    queues: readonly string[],
    names: readonly string[] | undefined,
    waiter: DeliveryWaiter | null,
    stillWaiting: () => boolean,
  ): Promise<boolean> {
    return this.listener
      .listen()
      .then(() => (stillWaiting() ? this.check(queues, names, waiter) : false))
      .catch(() => waiter !== null)
  }

  unregister(ids: readonly string[]): Promise<unknown> {
    const text = this.db.texts['wait-for-work-end']
    return Promise.all(ids.map((id) => this.db.query(text, [id], 'wait-for-work-end')))
  }

  async readDelivered(ids: readonly string[]): Promise<ClaimedJob[]> {
    // Unnamed: rare, and so planned for the table as it is (see findExpiredLeases).
    const rows = await this.db.query<JobRow<string>>(this.db.texts['wait-for-work-delivered'], [ids])
    return rows.map(toClaimedRow)
  }

  /**
   * A snooze to their own run time (settle.sql): ready again in their place, the attempt not
   * counted. The settle's NOTIFY wakes the waiters of their queues, this process's too, and its
   * commit takes their registrations out (functions/wake.sql).
   */
  giveBack(settlements: Settlement[]): Promise<unknown> {
    return this.db.query(
      this.db.texts.settle,
      [...settlementArrays(settlements), null, ...reportArrays(settlements)],
      'settle',
    )
  }

  // ── waking up ──────────────────────────────────────────────────────────────────────────────

  /** Arms the hub's due timer at a run time of the server's clock. */
  private armDue(serverAt: number | null): void {
    if (serverAt === null || !Number.isFinite(serverAt)) return
    this.hub.armDue(serverAt + this.clockOffsetMs, Date.now())
  }

  /**
   * Wakes the waiters of queues that have ready work, and arms the timer for their next due job.
   * With a waiter, the same statement registers it for delivery if it is not to wake at once;
   * says whether it did.
   */
  private async check(
    queues: readonly string[],
    names: readonly string[] | undefined,
    waiter: DeliveryWaiter | null = null,
  ): Promise<boolean> {
    if (this.closed || queues.length === 0) return false
    const lockKey = this.listener.lockKey
    const register =
      waiter === null || lockKey === null
        ? [null, null, null, null, null, null]
        : [waiter.id, waiter.limit, waiter.leaseMs, waiter.workerId, this.listener.deliveryChannel, lockKey]
    const [row] = await this.db.query<{
      ready: string[]
      next_run_at: string | null
      server_now: string
      stop_at: string | null
      registered: boolean
      schedules_version: string | null
    }>(this.db.texts['wait-for-work'], [queues, ...register, names ?? null], 'wait-for-work')
    const receivedAt = Date.now()
    // The server read its clock between sending the query and receivedAt. Assume the latest moment,
    // so a due timer can only fire late (by at most the round trip), never before the job's runAt:
    // the midpoint woke a waiter 7 ms early on a loaded CI machine, only to find nothing due.
    this.clockOffsetMs = receivedAt - Number(row!.server_now)
    const stopRequestedAt = row!.stop_at === null ? null : Number(row!.stop_at)
    const schedulesVersion = Number(row!.schedules_version ?? 0)
    const schedulesChanged =
      this.knownSchedulesVersion !== null && schedulesVersion !== this.knownSchedulesVersion
    if (stopRequestedAt !== this.knownStopAt || schedulesChanged) {
      this.controlRead({ stopRequestedAt, schedulesVersion }, { wake: true })
    }
    this.hub.notify(row!.ready)
    this.armDue(row!.next_run_at === null ? null : Number(row!.next_run_at))
    return row!.registered
  }
}
