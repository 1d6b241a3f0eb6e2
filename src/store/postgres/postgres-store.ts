import type pg from 'pg'

import { type ClaimedJob, type JobState } from '../../core/job.js'
import {
  type CancelParams,
  type ChangeJobResult,
  type ChangeJobsParams,
  type ChangeJobsResult,
  type ClaimParams,
  type ControlParams,
  type ControlRecord,
  type FindExpiredLeasesParams,
  type FindExpiredLeasesResult,
  type EnqueueParams,
  type EnqueueResult,
  type FireScheduleParams,
  type FireScheduleResult,
  type HeartbeatParams,
  type JobPage,
  type ListJobsParams,
  type MigrateResult,
  type PruneParams,
  type PruneResult,
  type PurgeParams,
  type DeleteJobsParams,
  type QueueStats,
  type RecoverParams,
  type RecoverResult,
  type RemoveWorkerParams,
  type RenewParams,
  type RetryParams,
  type SchedulesParams,
  type SchedulesResult,
  type SettleBatchResult,
  type SettleParams,
  type SettleResult,
  type StatsParams,
  type Store,
  type StoreCapabilities,
  type ThroughputCount,
  type ThroughputParams,
  type WaitParams,
  type WaitResult,
  type WorkerRecord,
  type WorkersParams,
} from '../store.js'
import {
  checkClaimParams,
  checkCancelParams,
  checkListJobsParams,
  checkDeleteJobsParams,
  hasResidualFilter,
  checkControlParams,
  checkPruneParams,
  checkPurgeParams,
  checkRetryParams,
  checkStatsParams,
  RECOVER_LIMIT_DEFAULT,
} from '../params.js'
import { assertInteger } from '../../core/validate.js'
import { LIST_WALK_BUDGET, walkFrom } from '../kernel/list-page.js'
import { assertOpen } from '../kernel/assert-open.js'
import { cancelledError } from '../kernel/cancel.js'
import { checkChangeJobsParams } from '../kernel/change-jobs.js'
import { compareIds } from '../kernel/job-ids.js'
import { EXPIRED_ERROR, type JobRow, toClaimedRow, toJob } from '../kernel/jobs.js'
import { checkRenewReports } from '../kernel/job-reports.js'
import { newLeaseTokenBase } from '../kernel/lease-tokens.js'
import { purgeInChunks } from '../kernel/purge.js'
import { checkSettlements } from '../kernel/settlements.js'
import { preparedOrClosed, usedThenClosed } from '../kernel/lifecycle.js'
import { foldStats, statsCountOf } from '../kernel/stats.js'
import { changedQueue, changeFreesWork } from '../kernel/queue-control.js'
import { checkFireScheduleParams, checkSchedulesParams } from '../kernel/schedules.js'
import { isJobId, settlementArrays, reportArrays, settleResults } from './postgres-encoding.js'
import { readyQueuesOf } from './postgres-enqueue-arrays.js'
import { enqueueInTransaction, enqueueJobs } from './postgres-enqueue.js'
import { applyControl } from './postgres-control.js'
import { pruneJobs } from './postgres-prune.js'
import { PostgresSchema, quoteIdent } from './postgres-migrations.js'
import { PostgresPool, type SqlName } from './postgres-pool.js'
import { changeSchedules, fireSchedule, readSchedules } from './postgres-schedules.js'
import {
  checkHeartbeatParams,
  checkRemoveWorkerParams,
  checkThroughputParams,
  checkWorkersParams,
} from '../kernel/workers.js'
import { heartbeat, readThroughput, readWorkers } from './postgres-workers.js'
import { PostgresWaiting } from './postgres-waiting.js'
import { PostgresEvents } from './postgres-events.js'
import { EVENT_CHANNEL, type EventSource } from '../events/job-event.js'
import {
  assertPostgresOptionKeys,
  checkPostgresOptions,
  type PostgresStoreOptions,
} from './postgres-options.js'

export { parsePostgresUrl, type PostgresStoreOptions } from './postgres-options.js'
export type { PostgresQueryable } from './postgres-enqueue.js'

const PURGE_CHUNK = 10_000

/** The last error of a job not started by its deadline; functions/claim.sql writes the same text. */
const EXPIRED_ERROR_JSON = JSON.stringify(EXPIRED_ERROR)

/**
 * The PostgreSQL store: jobs in one table of its own schema, shared by workers on many hosts.
 * Every hot-path call is one round trip: enqueue (a whole batch), claim (any number of queues,
 * FOR UPDATE SKIP LOCKED), settle (a whole batch) and settle with a claim are single statements or
 * functions of the schema (functions/); one job without a unique key, the serial producer's case,
 * is a plain statement (sql/enqueue-one.sql), without the function call's fixed cost. Waiting
 * workers are woken by LISTEN/NOTIFY on a connection of their own, which comes back by itself
 * after a drop or a server restart; an enqueue hands an idle worker its jobs directly, claimed in
 * the enqueue's own transaction (waitForWork with a claim, functions/deliver.sql).
 *
 * Without an explicit `now`, times are the server's clock (now_ms()), so hosts whose clocks differ
 * still agree on what is due and which leases ran out.
 */
export class PostgresStore implements Store, EventSource {
  readonly kind = 'postgres'
  readonly capabilities: StoreCapabilities = {
    crossProcessWake: 'listen-notify',
    transactionalEnqueue: true,
    // One statement per tick, one at a time: calls on several pooled connections would commit,
    // and draw their ids, in any order, and ids must follow the order jobs were enqueued in
    // (FIFO). Cutting 10,000 jobs into 4 × 2,500 on 4 connections saved 0.03 s of 0.21 s
    // (postgres-enqueue, load 0.5): not worth the order. Cut by bytes, though: 600 concurrent
    // enqueues of 1 MiB took 27-29 s in one statement, 14-17 s cut at 64 MiB and 9.7-10.8 s cut at
    // 16 MiB; one call of 1,100 MiB failed ("invalid message length": the server's 1 GiB limit on
    // a message), so an enqueueMany may carry at most 512 MiB.
    enqueueBatch: { maxItems: Infinity, maxBytes: 16 * 2 ** 20, maxCallBytes: 512 * 2 ** 20, maxInFlight: 1 },
    // An idle worker is handed its jobs by the enqueue (functions/deliver.sql). Enqueue →
    // handler start in another process, bench postgres-wake, medians of 3 runs, three pairs of
    // runs interleaved with the commit before on the shared 2-core machine (load 0.3-1.9): p50
    // 3.53, 3.08, 4.61 ms before, 2.55, 2.64, 3.25 ms with delivery.
    delivery: true,
    payloadSearch: true,
  }
  readonly schema: string
  /** Its migrations and functions: migrate() and the check of open({ migrate: false }). */
  private readonly schemaFiles: PostgresSchema
  private readonly db: PostgresPool
  private readonly texts: Record<SqlName, string>
  private readonly waiting: PostgresWaiting
  /** The job event log (postgres-events.ts), opened by the first publisher or subscriber. */
  private events: PostgresEvents | null = null
  private readonly config: pg.ClientConfig

  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    // Before connecting: a misspelt option must not migrate a schema it did not mean.
    assertPostgresOptionKeys(options)
    return preparedOrClosed(new PostgresStore(options), async (store) => {
      if (options.migrate ?? true) await store.migrate()
      else await store.assertSchemaCurrent()
      await store.control()
    })
  }

  /**
   * Connects without checking the schema, applies the pending migrations and closes: what
   * `ferry migrate` runs, so that it can say what it applied (open() would have applied it).
   */
  static async applyMigrations(options: PostgresStoreOptions): Promise<MigrateResult> {
    assertPostgresOptionKeys(options)
    return usedThenClosed(new PostgresStore(options), (store) => store.migrate())
  }

  private constructor(options: PostgresStoreOptions) {
    const { connectionString, schema, poolSize, server } = checkPostgresOptions(options)
    this.schema = schema
    this.schemaFiles = new PostgresSchema(schema)
    const config: pg.ClientConfig = { connectionString, keepAlive: true, keepAliveInitialDelayMillis: 10_000 }
    this.db = new PostgresPool(config, poolSize, server, this.schemaFiles)
    this.texts = this.db.texts
    this.waiting = new PostgresWaiting(this.db, config, schema)
    this.config = config
  }

  [EVENT_CHANNEL](): PostgresEvents {
    this.events ??= new PostgresEvents(this.db, this.config, this.schema)
    return this.events
  }

  // ── lifecycle ──────────────────────────────────────────────────────────────────────────────

  async migrate(): Promise<MigrateResult> {
    this.assertOpen('migrate')
    return await this.db.withClient((client) => this.schemaFiles.migrate(client))
  }

  async close(): Promise<void> {
    if (this.db.closed) return
    this.db.closed = true
    // Jobs handed to a waiter that closing ended go back in line before the pool goes.
    await this.waiting.close()
    await this.events?.close()
    await this.db.end()
  }

  // ── producer ───────────────────────────────────────────────────────────────────────────────

  async enqueue({ jobs, tx, now }: EnqueueParams): Promise<EnqueueResult[]> {
    this.assertOpen('enqueue')
    if (tx !== undefined) return enqueueInTransaction(this.db, tx, jobs, now)
    return enqueueJobs(this.db, this.waiting, jobs, now)
  }

  // ── worker hot path ────────────────────────────────────────────────────────────────────────

  async claim(params: ClaimParams): Promise<ClaimedJob[]> {
    this.assertOpen('claim')
    checkClaimParams(params)
    const { queues, names, limit, leaseMs, workerId, now } = params
    const rows = await this.db.query<JobRow<string>>(
      this.texts.claim,
      [queues, limit, leaseMs, workerId, now ?? null, newLeaseTokenBase(), names ?? null],
      'claim',
    )
    return rows.map(toClaimedRow)
  }

  async settle({ settlements, claim, now }: SettleParams): Promise<SettleBatchResult> {
    this.assertOpen('settle')
    if (claim === undefined) {
      if (settlements.length === 0) return { settled: [], claimed: [] }
      checkSettlements(settlements)
      const [row] = await this.db.query<{ lost: number[]; locked: number[] }>(
        this.texts.settle,
        [...settlementArrays(settlements), now ?? null, ...reportArrays(settlements)],
        'settle',
      )
      return { settled: settleResults(settlements.length, row!), claimed: [] }
    }
    checkClaimParams(claim)
    checkSettlements(settlements)
    const rows = await this.db.query<JobRow<string> & { lost: number[]; locked: number[] }>(
      this.texts['settle-with-claim'],
      [
        ...settlementArrays(settlements),
        claim.queues,
        claim.limit,
        claim.leaseMs,
        claim.workerId,
        now ?? null,
        newLeaseTokenBase(),
        claim.names ?? null,
        ...reportArrays(settlements),
      ],
      'settle-with-claim',
    )
    return {
      settled: settleResults(settlements.length, rows[0]!),
      claimed: rows.filter((row) => row.id !== null).map(toClaimedRow),
    }
  }

  async renew({ leases, leaseMs, delivered = false, now }: RenewParams): Promise<SettleResult[]> {
    this.assertOpen('renew')
    assertInteger(leaseMs, 'leaseMs', { min: 1 })
    checkRenewReports(leases)
    if (leases.length === 0) return []
    const rows = await this.db.query<{ ord: number; result: SettleResult }>(
      this.texts.renew,
      [
        leases.map((l) => (isJobId(l.id) ? l.id : null)),
        leases.map((l) => l.leaseToken),
        leaseMs,
        now ?? null,
        delivered,
        ...reportArrays(leases),
      ],
      'renew',
    )
    return rows.map((row) => row.result)
  }

  /**
   * With `claim`, the waiter is registered (sql/wait-for-work.sql) so that an enqueue may claim
   * jobs for it and send them on this store's delivery channel (functions/deliver.sql).
   */
  async waitForWork(params: WaitParams): Promise<WaitResult> {
    this.assertOpen('waitForWork')
    return this.waiting.wait(params)
  }

  // ── maintenance ────────────────────────────────────────────────────────────────────────────

  async recoverExpired({
    now,
    limit = RECOVER_LIMIT_DEFAULT,
    leases,
    clampLeases = false,
    expireJobs = false,
  }: RecoverParams = {}): Promise<RecoverResult> {
    this.assertOpen('recoverExpired')
    assertInteger(limit, 'limit', { min: 1 })
    const result: RecoverResult = { retried: [], dead: [], clamped: 0, expired: [] }
    // A statement of its own before the recovery: it runs only at a worker's start and after a
    // backward step, and the leases it moves were not expired, so the recovery's answer is the same.
    if (clampLeases) {
      const [row] = await this.db.query<{ count: number }>(this.texts['recover-expired-clamp-leases'], [
        now ?? null,
      ])
      result.clamped = row!.count
    }
    // A statement of its own too: the recoverer asks only when findExpiredLeases saw a job past its
    // start deadline, which claims end themselves unless no worker claims its queue.
    if (expireJobs) {
      const rows = await this.db.query<{ id: string }>(this.texts['recover-expired-start-deadlines'], [
        now ?? null,
        limit,
        EXPIRED_ERROR_JSON,
      ])
      result.expired = rows.map((row) => row.id).sort(compareIds)
    }
    const given = leases?.filter((lease) => isJobId(lease.id))
    if (given !== undefined && given.length === 0) return result
    const rows = await this.db.query<{ id: string; state: JobState }>(
      this.texts['recover-expired'],
      [
        now ?? null,
        limit,
        given?.map((lease) => lease.id) ?? null,
        given?.map((lease) => lease.leaseToken) ?? null,
        given?.map((lease) => Math.floor(lease.leaseExpiresAt)) ?? null,
      ],
      'recover-expired',
    )
    for (const row of rows.sort((a, b) => compareIds(a.id, b.id))) {
      ;(row.state === 'dead' ? result.dead : result.retried).push(row.id)
    }
    return result
  }

  async findExpiredLeases({
    now,
    limit = RECOVER_LIMIT_DEFAULT,
  }: FindExpiredLeasesParams = {}): Promise<FindExpiredLeasesResult> {
    this.assertOpen('findExpiredLeases')
    assertInteger(limit, 'limit', { min: 1 })
    // Unnamed, so planned for the table as it is at each call (a sweep is rare): a named statement
    // keeps the plan it made when the table was small (functions/README.md).
    const rows = await this.db.query<{
      now: string
      next_expires_at: string | null
      start_deadlines_passed: boolean
      id: string | null
      lease_token: string
      lease_expires_at: string
      lease_ms: string
    }>(this.texts['find-expired-leases'], [now ?? null, limit])
    const [first] = rows
    return {
      now: Number(first!.now),
      nextExpiresAt: first!.next_expires_at === null ? null : Number(first!.next_expires_at),
      startDeadlinesPassed: first!.start_deadlines_passed,
      leases: rows.flatMap((row) =>
        row.id === null
          ? []
          : [
              {
                id: row.id,
                leaseToken: row.lease_token,
                leaseExpiresAt: Number(row.lease_expires_at),
                leaseMs: Number(row.lease_ms),
              },
            ],
      ),
    }
  }

  // ── admin ──────────────────────────────────────────────────────────────────────────────────

  async listJobs(params: ListJobsParams = {}): Promise<JobPage> {
    this.assertOpen('listJobs')
    const checked = checkListJobsParams(params, { kind: this.kind, isJobId, payloadSearch: true })
    if (checked.ids !== undefined) {
      if (checked.ids.length === 0) return { jobs: [], nextCursor: null }
      const rows = await this.db.query<JobRow<string>>(this.texts['list-jobs-ids'], [checked.ids])
      const byId = new Map(rows.map((row) => [row.id, row]))
      return {
        jobs: checked.ids.flatMap((id) => {
          const row = byId.get(id)
          return row === undefined ? [] : [toJob(row)]
        }),
        nextCursor: null,
      }
    }
    const { state, queue, name, uniqueKey, createdAfter, createdBefore, payloadContains, limit, cursor } =
      checked
    // The walk takes the filters an index answers (sql/list-jobs.sql); a page of only those reads
    // limit + 1 rows, any other filter makes it a bounded walk.
    const walkState = state !== undefined && state !== 'completed' ? state : null
    const walkQueue = walkState !== null ? (queue ?? null) : null
    const walkUniqueKey = uniqueKey ?? null
    const exact =
      !hasResidualFilter(checked) &&
      (state === undefined || walkState !== null) &&
      (queue === undefined || walkQueue !== null) &&
      (walkUniqueKey === null || (state === undefined && queue === undefined))
    const budget = exact ? limit + 1 : LIST_WALK_BUDGET
    const rows = await this.db.query<JobRow<string> & { walk_floor: string | null; looked: number }>(
      this.texts['list-jobs'],
      [
        walkFrom(cursor).toString(),
        walkState,
        walkQueue,
        walkUniqueKey,
        budget,
        limit + 1,
        state ?? null,
        queue ?? null,
        name ?? null,
        createdAfter ?? null,
        createdBefore ?? null,
        payloadContains ?? null,
      ],
    )
    const jobs = rows.filter((row) => row.id !== null)
    if (jobs.length > limit) {
      const page = jobs.slice(0, limit)
      return { jobs: page.map(toJob), nextCursor: page[page.length - 1]!.id }
    }
    const { walk_floor: floor, looked } = rows[0]!
    return { jobs: jobs.map(toJob), nextCursor: looked >= budget && floor !== null ? floor : null }
  }

  async stats(params: StatsParams = {}): Promise<QueueStats[]> {
    this.assertOpen('stats')
    checkStatsParams(params)
    const { now, recentWindowMs = 60_000 } = params
    const rows = await this.db.query<{
      kind: 'count' | 'recent' | 'expired'
      queue: string
      state: JobState
      count: number
      oldest: string | number | null
    }>(this.texts.stats, [now ?? null, Math.floor(recentWindowMs)])
    return foldStats(
      rows.map(({ kind, queue, state, count, oldest }) => ({
        queue,
        of: statsCountOf(kind, state),
        count,
        oldestAt: oldest === null ? null : Number(oldest),
      })),
      recentWindowMs,
    )
  }

  async retry(params: RetryParams): Promise<number> {
    this.assertOpen('retry')
    checkRetryParams(params)
    const { ids, allDead = false, queue, now } = params
    const idList = allDead ? null : (ids ?? []).filter(isJobId)
    if (idList !== null && idList.length === 0) return 0
    const [row] = await this.db.query<{ count: number }>(this.texts.retry, [
      idList,
      queue ?? null,
      now ?? null,
    ])
    return row!.count
  }

  async cancel(params: CancelParams): Promise<number> {
    this.assertOpen('cancel')
    checkCancelParams(params)
    const { ids, now } = params
    const idList = ids.filter(isJobId)
    if (idList.length === 0) return 0
    const error = cancelledError()
    const [row] = await this.db.query<{ count: number }>(this.texts.cancel, [
      idList,
      JSON.stringify(error),
      now ?? null,
    ])
    return row!.count
  }

  async purge(params: PurgeParams): Promise<number> {
    this.assertOpen('purge')
    checkPurgeParams(params)
    const { state, olderThanMs = 0, queue, now } = params
    // One instant for every chunk, so a purge without `now` ends even while jobs keep finishing.
    const at = now ?? (await this.serverNow())
    return purgeInChunks(PURGE_CHUNK, async (limit) => {
      const [row] = await this.db.query<{ count: number }>(this.texts.purge, [
        state,
        Math.floor(olderThanMs),
        queue ?? null,
        limit,
        at,
      ])
      return { deleted: row!.count }
    })
  }

  async deleteJobs(params: DeleteJobsParams): Promise<number> {
    this.assertOpen('deleteJobs')
    checkDeleteJobsParams(params)
    const ids = params.ids.filter(isJobId)
    if (ids.length === 0) return 0
    const [row] = await this.db.query<{ count: number }>(this.texts['delete-jobs'], [ids])
    return row!.count
  }

  async changeJobs(params: ChangeJobsParams): Promise<ChangeJobsResult> {
    this.assertOpen('changeJobs')
    const changes = checkChangeJobsParams(params, isJobId)
    if (changes.length === 0) return { results: [] }
    // An id of no valid form goes as NULL, which matches no row: 'not_found', in its place.
    const rows = await this.db.query<{ result: ChangeJobResult }>(this.texts['change-jobs'], [
      changes.map((change) => change.id),
      changes.map((change) => change.priority),
      changes.map((change) => change.runAt),
      changes.map((change) => change.payload),
      changes.map((change) => change.maxAttempts),
      params.now ?? null,
    ])
    // This process's waiters are woken by the NOTIFY of the commit, as for a retry.
    return { results: rows.map((row) => row.result) }
  }

  async prune(params: PruneParams = {}): Promise<PruneResult> {
    this.assertOpen('prune')
    const { now, limit } = checkPruneParams(params)
    return pruneJobs(this.db, this.texts, now ?? this.serverNow(), limit)
  }

  // ── schedules ──────────────────────────────────────────────────────────────────────────────

  async schedules(params: SchedulesParams = {}): Promise<SchedulesResult> {
    this.assertOpen('schedules')
    checkSchedulesParams(params)
    // Every worker's scheduler reloads: those of this process at once, the others by the NOTIFY
    // of the change's commit.
    if (await changeSchedules(this.db, this.texts, params)) this.waiting.wakeAll()
    return readSchedules(this.db, this.texts)
  }

  async fireSchedule(params: FireScheduleParams): Promise<FireScheduleResult> {
    this.assertOpen('fireSchedule')
    checkFireScheduleParams(params)
    const result = await fireSchedule(this.db, this.texts, params)
    // As after an enqueue: this process's waiters at once, those of others by the fire's NOTIFY.
    if (result.outcome === 'fired') this.waiting.enqueued(readyQueuesOf(params.jobs, params.now))
    return result
  }

  // ── worker control ─────────────────────────────────────────────────────────────────────────

  async control(params: ControlParams = {}): Promise<ControlRecord> {
    this.assertOpen('control')
    checkControlParams(params)
    const record = await applyControl(this.db, this.texts, params)
    // This process's waiters at once; those of others by the NOTIFY of the change's commit.
    const queue = changedQueue(params)
    if (queue !== null && changeFreesWork(params)) this.waiting.enqueued([queue])
    this.waiting.controlRead(record, { wake: params.requestStop === true })
    return record
  }

  // ── worker registry and throughput ─────────────────────────────────────────────────────────

  async heartbeat(params: HeartbeatParams): Promise<void> {
    this.assertOpen('heartbeat')
    const counts = checkHeartbeatParams(params)
    await heartbeat(this.db, this.texts, params, counts)
  }

  async removeWorker(params: RemoveWorkerParams): Promise<void> {
    this.assertOpen('removeWorker')
    checkRemoveWorkerParams(params)
    await this.db.query(this.texts['workers-delete'], [params.workerId])
  }

  async workers(params: WorkersParams = {}): Promise<WorkerRecord[]> {
    this.assertOpen('workers')
    checkWorkersParams(params)
    return readWorkers(this.db, this.texts, params.now)
  }

  async throughput(params: ThroughputParams): Promise<ThroughputCount[]> {
    this.assertOpen('throughput')
    checkThroughputParams(params)
    return readThroughput(this.db, this.texts, params)
  }

  // ── internals ──────────────────────────────────────────────────────────────────────────────

  private async serverNow(): Promise<number> {
    const [row] = await this.db.query<{ now: string }>(
      `SELECT ${quoteIdent(this.schema)}.now_ms() AS now`,
      [],
    )
    return Number(row!.now)
  }

  private async assertSchemaCurrent(): Promise<void> {
    await this.db.withClient((client) => this.schemaFiles.assertCurrent(client))
  }

  private assertOpen(operation: string): void {
    assertOpen(this.db.closed, operation)
  }
}
