import type Database from 'better-sqlite3'
import type { ClaimedJob } from '../../core/job.js'
import { assertInteger, assertQueueList } from '../../core/validate.js'
import type {
  CancelParams,
  ChangeJobsParams,
  ChangeJobsResult,
  ClaimParams,
  ControlParams,
  ControlRecord,
  EnqueueParams,
  FindExpiredLeasesParams,
  FindExpiredLeasesResult,
  EnqueueResult,
  FireScheduleParams,
  FireScheduleResult,
  HeartbeatParams,
  JobPage,
  ListJobsParams,
  MigrateResult,
  PruneParams,
  PruneResult,
  PurgeParams,
  DeleteJobsParams,
  QueueStats,
  RemoveWorkerParams,
  RecoverParams,
  RecoverResult,
  RenewParams,
  RetryParams,
  SchedulesParams,
  SchedulesResult,
  SettleBatchResult,
  SettleParams,
  SettleResult,
  StatsParams,
  Store,
  StoreCapabilities,
  ThroughputCount,
  ThroughputParams,
  WaitParams,
  WaitResult,
  WorkerRecord,
  WorkersParams,
} from '../store.js'
import {
  checkClaimParams,
  checkCancelParams,
  checkListJobsParams,
  checkDeleteJobsParams,
  type CheckedListFilters,
  checkControlParams,
  checkNames,
  checkPruneParams,
  checkPurgeParams,
  checkRetryParams,
  checkStatsParams,
  deliveryRefused,
  RECOVER_LIMIT_DEFAULT,
  transactionRefused,
} from '../params.js'
import { WakeHub } from '../wake-hub.js'
import { cutPage, LIST_WALK_BUDGET, walkFrom } from '../kernel/list-page.js'
import { assertOpen } from '../kernel/assert-open.js'
import { cancelledError } from '../kernel/cancel.js'
import { checkChangeJobsParams } from '../kernel/change-jobs.js'
import { jobIdCheck } from '../kernel/job-ids.js'
import { preparedOrClosed, usedThenClosed } from '../kernel/lifecycle.js'
import { checkRenewReports, reportColumns } from '../kernel/job-reports.js'
import { checkSettlements } from '../kernel/settlements.js'
import { claimRows, expireJobs } from './claim-rows.js'
import {
  changedQueue,
  changeFreesWork,
  queueRowAfter,
  toQueueControls,
  type QueueControlRow,
} from '../kernel/queue-control.js'
import {
  checkFireScheduleParams,
  checkSchedulesParams,
  scheduleChanges,
  toSchedule,
  type ScheduleRow,
} from '../kernel/schedules.js'
import { changeScheduleRows, fireScheduleRows } from './schedule-rows.js'
import {
  checkHeartbeatParams,
  checkRemoveWorkerParams,
  checkThroughputParams,
  checkWorkersParams,
} from '../kernel/workers.js'
import { heartbeatRows, throughputRows, workerRecords } from './worker-rows.js'
import { pruneRows, purgeRows } from './finished-rows.js'
import { changeJobRows } from './change-job-rows.js'
import { enqueueRows, type EnqueuedRows } from './enqueue-rows.js'
import { type JobRow, toClaimedRow, toJob } from '../kernel/jobs.js'
import { settleRows } from './settle-rows.js'
import { expiredLeases, recoverLeases } from './recover-rows.js'
import { statsRows } from './stats-rows.js'
import { SqliteConnection, type SqlName } from './sqlite-connection.js'
import { SqliteEvents } from './sqlite-events.js'
import { EVENT_CHANNEL, type EventSource } from '../events/job-event.js'
import { SqliteFileWatch } from './sqlite-file-watch.js'
import { SqliteSchema } from './sqlite-migrations.js'
import { resolveSqliteOptions, type SqliteDurability, type SqliteStoreOptions } from './sqlite-options.js'

// What openStore() loads lazily, with its URL parser, as it loads every backend's module.
export { parseSqliteUrl, type SqliteDurability, type SqliteStoreOptions } from './sqlite-options.js'

/** INTEGER PRIMARY KEY: a signed 64-bit rowid, 19 digits. */
const isJobId = jobIdCheck(19)

/**
 * The embedded store: one SQLite file in WAL mode, opened with better-sqlite3. Every write runs
 * in a BEGIN IMMEDIATE transaction (a deferred one could not wait for the lock once it had read),
 * and with durability 'full' every commit is on disk before the call resolves. Calls are
 * synchronous underneath, so a batch costs no round trips: one transaction, one fsync.
 *
 * This class wires the parts to the Store contract: the connection and its transactions
 * (sqlite-connection.ts, over the file of sqlite-file.ts), the claim's and the settle's
 * transaction bodies (claim-rows.ts, settle-rows.ts), rows and jobs (kernel/jobs.ts), the
 * migrations (sqlite-migrations.ts), and the wake-ups: the WakeHub within this process,
 * the file watch across processes (sqlite-file-watch.ts).
 */
export class SqliteStore implements Store, EventSource {
  readonly kind = 'sqlite'
  readonly capabilities: StoreCapabilities = {
    crossProcessWake: 'file-watch',
    transactionalEnqueue: false,
    // One transaction and one fsync for all of it: more calls would only add fsyncs, and the
    // writes are synchronous, so nothing could overlap.
    enqueueBatch: { maxItems: Infinity, maxBytes: Infinity, maxCallBytes: Infinity, maxInFlight: 1 },
    delivery: false,
    payloadSearch: false,
  }
  readonly path: string
  readonly durability: SqliteDurability

  private readonly connection: SqliteConnection
  /** The connection's database: the file watch reads its data_version, tests read its pragmas. */
  private readonly db: Database.Database
  private readonly schema: SqliteSchema
  private readonly hub: WakeHub
  private readonly fileWatch: SqliteFileWatch
  private closed = false
  /** The job event log (sqlite-events.ts), opened by the first publisher or subscriber. */
  private events: SqliteEvents | null = null
  /**
   * The queues with a concurrency limit (the queue's or its groups'), as this store last read them (each control() call, which
   * a worker makes about once a second): a settle wakes this process's waiters there.
   */
  private limitedQueues: string[] = []

  static async open(options: SqliteStoreOptions): Promise<SqliteStore> {
    return preparedOrClosed(new SqliteStore(options), async (store) => {
      if (options.migrate ?? true) await store.migrate()
      else store.schema.assertCurrent()
    })
  }

  /**
   * Opens the database without checking its schema, applies the pending migrations and closes it:
   * what `ferry migrate` runs, so that it can say what it applied (open() would have applied it).
   */
  static async applyMigrations(options: SqliteStoreOptions): Promise<MigrateResult> {
    return usedThenClosed(new SqliteStore(options), (store) => store.migrate())
  }

  private constructor(options: SqliteStoreOptions) {
    const resolved = resolveSqliteOptions(options)
    this.path = resolved.path
    this.durability = resolved.durability
    // A waiting worker must hear of a deleted or replaced file: woken, its claim reports it.
    this.connection = new SqliteConnection(resolved, () => this.hub.broadcast('notified'))
    this.db = this.connection.db
    this.schema = new SqliteSchema(this.connection, resolved.path)
    this.fileWatch = new SqliteFileWatch(this.db, resolved.path, this.connection.file, {
      onChange: () => this.hub.broadcast('notified'),
      onDatabaseFileEvent: () => {
        if (this.connection.file.atPath() !== 'same') this.hub.broadcast('notified')
      },
    })
    this.hub = new WakeHub({ onWaitingChange: (waiting) => this.fileWatch.setActive(waiting) })
  }

  [EVENT_CHANNEL](): SqliteEvents {
    this.events ??= new SqliteEvents(this.connection, this.path, () => this.fileWatch.ring())
    return this.events
  }

  // ── lifecycle ──────────────────────────────────────────────────────────────────────────────

  async migrate(): Promise<MigrateResult> {
    this.assertOpen('migrate')
    return this.schema.migrate()
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.hub.broadcast('aborted')
    this.events?.close()
    this.fileWatch.close()
    this.connection.close()
    this.fileWatch.removeBellIfUnused()
  }

  // ── producer ───────────────────────────────────────────────────────────────────────────────

  async enqueue({ jobs, tx, now }: EnqueueParams): Promise<EnqueueResult[]> {
    this.assertOpen('enqueue')
    if (tx !== undefined) throw transactionRefused(this.kind)
    if (jobs.length === 0) return []
    const enqueued = this.connection.write((lockedAt) => enqueueRows(this.connection, jobs, now ?? lockedAt))
    this.wakeAfterEnqueue(enqueued)
    return enqueued.results
  }

  // ── worker hot path ────────────────────────────────────────────────────────────────────────

  async claim(params: ClaimParams): Promise<ClaimedJob[]> {
    this.assertOpen('claim')
    checkClaimParams(params)
    return this.connection
      .write((lockedAt) => claimRows(this.connection, params, params.now ?? lockedAt), { sync: false })
      .map(toClaimedRow)
  }

  async settle({ settlements, claim, now }: SettleParams): Promise<SettleBatchResult> {
    this.assertOpen('settle')
    if (claim !== undefined) checkClaimParams(claim)
    else if (settlements.length === 0) return { settled: [], claimed: [] }
    checkSettlements(settlements)
    const { settled, rows, rescheduled } = this.connection.write((lockedAt) => {
      const at = now ?? lockedAt
      const { results, rescheduled } = settleRows(this.connection, settlements, at)
      return {
        settled: results,
        rows: claim === undefined ? [] : claimRows(this.connection, claim, at),
        rescheduled,
      }
    })
    if (rescheduled) this.wakeAfterReschedule()
    // A settled job may leave room under a queue's limit for a worker of this process waiting
    // there; those of other processes wake on the commit itself (the file watch).
    if (this.limitedQueues.length > 0 && settlements.length > 0) this.hub.notify(this.limitedQueues)
    return { settled, claimed: rows.map(toClaimedRow) }
  }

  async renew({ leases, leaseMs, delivered, now }: RenewParams): Promise<SettleResult[]> {
    this.assertOpen('renew')
    if (delivered === true) throw deliveryRefused(this.kind, 'delivered')
    assertInteger(leaseMs, 'leaseMs', { min: 1 })
    checkRenewReports(leases)
    if (leases.length === 0) return []
    const renew = this.connection.statement('renew')
    return this.connection.write((lockedAt) => {
      const at = now ?? lockedAt
      return leases.map((lease): SettleResult => {
        const { changes } = renew.run({
          id: lease.id,
          lease_token: lease.leaseToken,
          lease_expires_at: at + leaseMs,
          ...reportColumns(lease.report),
          now: at,
        })
        return changes === 1 ? 'ok' : 'lease_lost'
      })
    })
  }

  async waitForWork(params: WaitParams): Promise<WaitResult> {
    this.assertOpen('waitForWork')
    if (params.claim !== undefined) throw deliveryRefused(this.kind, 'claim')
    assertQueueList(params.queues)
    // Checked for the same errors as elsewhere; unused here, since this wait never looks at ready
    // jobs (it wakes on commits and on due times, and the claim then filters the names).
    checkNames(params.names)
    const woken = this.hub.wait(params)
    // Armed after the waiter is registered, so a job due right now wakes it at once.
    this.hub.armDue(this.nextDueAt(params.queues), Date.now())
    // The file watch is running now: re-check what may have been committed before it started.
    this.fileWatch.check()
    return { reason: await woken, jobs: [] }
  }

  // ── maintenance ────────────────────────────────────────────────────────────────────────────

  async recoverExpired({
    now,
    limit = RECOVER_LIMIT_DEFAULT,
    leases,
    clampLeases = false,
    expireJobs: expireStarts = false,
  }: RecoverParams = {}): Promise<RecoverResult> {
    this.assertOpen('recoverExpired')
    assertInteger(limit, 'limit', { min: 1 })
    const result: RecoverResult = { retried: [], dead: [], clamped: 0, expired: [] }
    // Without leases given: those expired now, found by a read first, so the usual answer (none)
    // takes no write lock. Clamped leases were not expired, so they are not among them.
    const candidates =
      leases ?? this.connection.read(() => expiredLeases(this.connection, now ?? Date.now(), limit))
    if (clampLeases) {
      result.clamped = this.connection.write(
        (lockedAt) =>
          this.connection.statement('recover-expired-clamp-leases').run({ now: now ?? lockedAt }).changes,
      )
    }
    if (expireStarts) {
      const ended = this.connection.write((lockedAt) => expireJobs(this.connection, now ?? lockedAt, limit))
      result.expired = ended.sort((a, b) => a - b).map(String)
    }
    if (candidates.length === 0) return result
    const { retried, dead } = this.connection.write((lockedAt) =>
      recoverLeases(this.connection, candidates, now ?? lockedAt),
    )
    result.retried = retried
    result.dead = dead
    if (result.retried.length > 0) {
      this.hub.broadcast('notified')
      this.fileWatch.ring()
    }
    return result
  }

  async findExpiredLeases({
    now,
    limit = RECOVER_LIMIT_DEFAULT,
  }: FindExpiredLeasesParams = {}): Promise<FindExpiredLeasesResult> {
    this.assertOpen('findExpiredLeases')
    assertInteger(limit, 'limit', { min: 1 })
    const at = now ?? Date.now()
    return this.connection.read(() => ({
      now: at,
      leases: expiredLeases(this.connection, at, limit),
      nextExpiresAt: this.connection.statement('find-expired-leases-next-expiry').pluck().get({ now: at }) as
        number | null,
      startDeadlinesPassed:
        this.connection.statement('find-expired-start-deadline').get({ now: at }) !== undefined,
    }))
  }

  // ── admin ──────────────────────────────────────────────────────────────────────────────────

  async listJobs(params: ListJobsParams = {}): Promise<JobPage> {
    this.assertOpen('listJobs')
    const checked = checkListJobsParams(params, { kind: this.kind, isJobId, payloadSearch: false })
    if (checked.ids !== undefined) {
      const getJob = this.connection.statement('list-jobs-ids')
      const rows = this.connection.read(() =>
        checked.ids.map((id) => getJob.get({ id }) as JobRow<number> | undefined),
      )
      return { jobs: rows.flatMap((row) => (row === undefined ? [] : [toJob(row)])), nextCursor: null }
    }
    const { state, queue, name, uniqueKey, createdAfter, createdBefore, limit, cursor } = checked
    const walk = this.connection.statement(listJobsWalk(checked))
    const getJob = this.connection.statement('list-jobs-ids')
    const { rows, nextCursor } = this.connection.read(() => {
      const page = cutPage(
        walk.iterate({
          up_to: walkFrom(cursor),
          budget: LIST_WALK_BUDGET,
          state: state ?? null,
          queue: queue ?? null,
          name: name ?? null,
          unique_key: uniqueKey ?? null,
          created_after: createdAfter ?? null,
          created_before: createdBefore ?? null,
        }) as Iterable<{ id: number; listed: number }>,
        limit,
      )
      // In the same read transaction as the walk, so each id is still the job the walk saw.
      const found = page.rows.map(({ id }) => getJob.get({ id }) as JobRow<number> | undefined)
      return { rows: found.flatMap((row) => (row === undefined ? [] : [row])), nextCursor: page.nextCursor }
    })
    return { jobs: rows.map(toJob), nextCursor }
  }

  async stats(params: StatsParams = {}): Promise<QueueStats[]> {
    this.assertOpen('stats')
    checkStatsParams(params)
    const { now, recentWindowMs = 60_000 } = params
    return statsRows(this.connection, now ?? Date.now(), recentWindowMs)
  }

  async retry(params: RetryParams): Promise<number> {
    this.assertOpen('retry')
    checkRetryParams(params)
    const { ids, allDead = false, queue, now } = params
    const at = now ?? Date.now()
    const queues = this.connection.write(() => {
      if (allDead)
        return this.connection
          .statement('retry-all-dead')
          .pluck()
          .all({ queue: queue ?? null, now: at }) as string[]
      const retry = this.connection.statement('retry').pluck()
      const moved: string[] = []
      for (const id of ids ?? []) {
        const jobQueue = isJobId(id) ? (retry.get({ id, now: at }) as string | undefined) : undefined
        if (jobQueue !== undefined) moved.push(jobQueue)
      }
      return moved
    })
    this.hub.notify(queues)
    if (queues.length > 0) this.fileWatch.ring()
    return queues.length
  }

  async cancel(params: CancelParams): Promise<number> {
    this.assertOpen('cancel')
    checkCancelParams(params)
    const { ids, now } = params
    const at = now ?? Date.now()
    const lastError = JSON.stringify(cancelledError())
    const cancel = this.connection.statement('cancel')
    return this.connection.write(() => {
      let count = 0
      for (const id of ids)
        if (isJobId(id)) count += cancel.run({ id, last_error: lastError, now: at }).changes
      return count
    })
  }

  async purge(params: PurgeParams): Promise<number> {
    this.assertOpen('purge')
    checkPurgeParams(params)
    return purgeRows(this.connection, params)
  }

  async deleteJobs(params: DeleteJobsParams): Promise<number> {
    this.assertOpen('deleteJobs')
    checkDeleteJobsParams(params)
    const ids = params.ids.filter(isJobId)
    if (ids.length === 0) return 0
    const deleteJob = this.connection.statement('delete-jobs')
    return this.connection.write(() => {
      this.connection.statement('purge-keep-ids').run()
      let count = 0
      for (const id of ids) count += deleteJob.run({ id }).changes
      return count
    })
  }

  async changeJobs(params: ChangeJobsParams): Promise<ChangeJobsResult> {
    this.assertOpen('changeJobs')
    const changes = checkChangeJobsParams(params, isJobId)
    if (changes.length === 0) return { results: [] }
    const { results, readyQueues, earliestScheduled } = this.connection.write((lockedAt) =>
      changeJobRows(this.connection, changes, params.now ?? lockedAt),
    )
    this.wake(readyQueues, earliestScheduled, readyQueues.size > 0 || earliestScheduled !== null)
    return { results }
  }

  async prune(params: PruneParams = {}): Promise<PruneResult> {
    this.assertOpen('prune')
    return pruneRows(this.connection, checkPruneParams(params))
  }

  // ── schedules ──────────────────────────────────────────────────────────────────────────────

  async schedules(params: SchedulesParams = {}): Promise<SchedulesResult> {
    this.assertOpen('schedules')
    checkSchedulesParams(params)
    // A call that changes nothing (a scheduler's load) only reads: it must not wait for the write lock.
    const changed =
      scheduleChanges(params).length > 0 &&
      this.connection.write((lockedAt) => changeScheduleRows(this.connection, params, params.now ?? lockedAt))
    // Every worker's scheduler reloads: those of this process now, the others on the commit.
    if (changed) {
      this.hub.broadcast('notified')
      this.fileWatch.ring()
    }
    return this.connection.read(() => ({
      schedules: (this.connection.statement('schedules-list').all() as ScheduleRow[]).map(toSchedule),
      version: this.schedulesVersion(),
    }))
  }

  async fireSchedule(params: FireScheduleParams): Promise<FireScheduleResult> {
    this.assertOpen('fireSchedule')
    checkFireScheduleParams(params)
    const fired = this.connection.write((lockedAt) =>
      fireScheduleRows(this.connection, params, params.now ?? lockedAt),
    )
    if ('outcome' in fired) return fired
    this.wakeAfterEnqueue(fired)
    return { outcome: 'fired', ids: fired.results.map((result) => result.id) }
  }

  // ── worker control ─────────────────────────────────────────────────────────────────────────

  async control(params: ControlParams = {}): Promise<ControlRecord> {
    this.assertOpen('control')
    checkControlParams(params)
    const { requestStop = false, now } = params
    const queue = changedQueue(params)
    if (requestStop || queue !== null) {
      this.connection.write((lockedAt) => {
        const at = now ?? lockedAt
        if (requestStop) this.connection.statement('control-request-stop').run({ now: at })
        if (queue !== null) this.changeQueue(params, queue, at)
      })
    }
    // A pause frees no work: nobody needs waking for it.
    const freesWork = queue !== null && changeFreesWork(params)
    if (requestStop) this.hub.broadcast('notified')
    else if (freesWork) this.hub.notify([queue])
    if (requestStop || freesWork) this.fileWatch.ring()
    const { at, rows, schedulesVersion } = this.connection.read(() => ({
      at: this.connection.statement('control').pluck().get() as number | undefined,
      rows: this.connection.statement('queue-control-list').all() as QueueControlRow[],
      schedulesVersion: this.schedulesVersion(),
    }))
    this.limitedQueues = rows
      .filter((row) => row.concurrency !== null || row.group_concurrency !== null)
      .map((row) => row.queue)
    return {
      stopRequestedAt: at ?? null,
      queues: toQueueControls(rows),
      schedulesVersion,
    }
  }

  // ── worker registry and throughput ─────────────────────────────────────────────────────────

  async heartbeat(params: HeartbeatParams): Promise<void> {
    this.assertOpen('heartbeat')
    const counts = checkHeartbeatParams(params)
    this.connection.write((lockedAt) =>
      heartbeatRows(this.connection, params, counts, params.now ?? lockedAt),
    )
  }

  async removeWorker(params: RemoveWorkerParams): Promise<void> {
    this.assertOpen('removeWorker')
    checkRemoveWorkerParams(params)
    this.connection.write(() =>
      this.connection.statement('workers-delete').run({ worker_id: params.workerId }),
    )
  }

  async workers(params: WorkersParams = {}): Promise<WorkerRecord[]> {
    this.assertOpen('workers')
    checkWorkersParams(params)
    return this.connection.read(() => workerRecords(this.connection, params.now ?? Date.now()))
  }

  async throughput(params: ThroughputParams): Promise<ThroughputCount[]> {
    this.assertOpen('throughput')
    checkThroughputParams(params)
    return this.connection.read(() => throughputRows(this.connection, params, params.now ?? Date.now()))
  }

  // ── internals ──────────────────────────────────────────────────────────────────────────────

  /** Applies a control call's queue change inside its write transaction. */
  private changeQueue(params: ControlParams, queue: string, at: number): void {
    const current = this.connection.statement('queue-control-get').get({ queue }) as
      QueueControlRow | undefined
    const row = queueRowAfter(params, queue, current ?? null, at)
    if (row === null) this.connection.statement('queue-control-delete').run({ queue })
    else this.connection.statement('queue-control-put').run(row)
    if (row?.rate_limit == null && row?.group_rate_limit == null) {
      this.connection.statement('queue-starts-delete').run({ queue })
    }
  }

  /**
   * Deletes finished jobs with one of purge's or prune's statements, in a write transaction of
   * its own: first ferry_ids is raised past every id in the table, so that no id deleted is given
   * again (sql/purge-keep-ids.sql). Returns how many went.
   */
  /** When a waiter of these queues (none: only scheduled jobs count) should look again unasked. */
  private nextDueAt(queues: readonly string[] | null = null): number | null {
    const json = queues === null ? null : JSON.stringify(queues)
    return this.connection.read(
      () =>
        this.connection.statement('wait-for-work-next-due').pluck().get({ queues: json }) as number | null,
    )
  }

  /** The store's schedules version: 0 before the first change. */
  private schedulesVersion(): number {
    return (this.connection.statement('schedules-version').pluck().get() as number | undefined) ?? 0
  }

  /** Wakes the waiters an enqueue's jobs concern: here at once, in other processes through the file. */
  private wakeAfterEnqueue({ results, readyQueues, earliestScheduled }: EnqueuedRows): void {
    this.wake(
      readyQueues,
      earliestScheduled,
      results.some((result) => result.created),
    )
  }

  /**
   * Wakes the waiters of queues given ready jobs and arms the timer for a job that now waits: here
   * at once, in other processes through the file when `ring`.
   */
  private wake(readyQueues: ReadonlySet<string>, earliestScheduled: number | null, ring: boolean): void {
    this.hub.notify(readyQueues)
    this.hub.armDue(earliestScheduled, Date.now())
    if (ring) this.fileWatch.ring()
  }

  private wakeAfterReschedule(): void {
    this.hub.armDue(this.nextDueAt(), Date.now())
    this.fileWatch.ring()
  }

  private assertOpen(operation: string): void {
    assertOpen(this.closed, operation)
    this.connection.assertNotLost()
  }
}

/**
 * Which walk a listJobs page reads (sql/list-jobs*.sql): the index that holds the fewest rows the
 * filters do not want (migrations/0015). Completed jobs are in no state index: most of a table,
 * they are most of what the primary key or a queue's index walks past anyway.
 */
export function listJobsWalk({ state, queue, uniqueKey }: CheckedListFilters): SqlName {
  if (uniqueKey !== undefined) return 'list-jobs-by-unique-key'
  const byState = state !== undefined && state !== 'completed'
  if (queue !== undefined) return byState ? 'list-jobs-by-queue-state' : 'list-jobs-by-queue'
  return byState ? 'list-jobs-by-state' : 'list-jobs'
}
