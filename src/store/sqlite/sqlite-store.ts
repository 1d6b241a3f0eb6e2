import Database from 'better-sqlite3'
import { chmodSync, closeSync, existsSync, openSync, statSync, type Stats } from 'node:fs'
import { resolve } from 'node:path'
import { StoreUnavailableError, ValidationError } from '../../core/errors.js'
import { type ClaimedJob, type Job, type JobError, type JobState } from '../../core/job.js'
import type { Settlement } from '../../core/outcome.js'
import { assertKnownKeys, assertQueueList, optionKeys } from '../../core/validate.js'
import type {
  CancelParams,
  ClaimParams,
  ControlParams,
  ControlRecord,
  EnqueueParams,
  ExpiredLease,
  FindExpiredLeasesParams,
  FindExpiredLeasesResult,
  EnqueueResult,
  JobPage,
  ListJobsParams,
  MigrateResult,
  PurgeParams,
  QueueStats,
  RecoverParams,
  RecoverResult,
  RenewParams,
  RetryParams,
  SettleBatchResult,
  SettleParams,
  SettleResult,
  StatsParams,
  Store,
  StoreCapabilities,
  WaitParams,
  WaitResult,
} from '../store.js'
import {
  assertPositiveInteger,
  checkClaimParams,
  checkCancelParams,
  checkListJobsParams,
  checkControlParams,
  checkNames,
  checkPurgeParams,
  checkRetryParams,
  checkStatsParams,
  deliveryRefused,
  messageOf,
  RECOVER_LIMIT_DEFAULT,
  transactionRefused,
} from '../params.js'
import { WakeHub } from '../wake-hub.js'
import { assertOpen } from '../kernel/assert-open.js'
import { cancelledError } from '../kernel/cancel.js'
import { wrapDriverError } from '../kernel/driver-errors.js'
import { jobIdCheck } from '../kernel/job-ids.js'
import { preparedOrClosed, usedThenClosed } from '../kernel/lifecycle.js'
import { toClaimedJob } from '../kernel/jobs.js'
import { newLeaseTokenBase } from '../kernel/lease-tokens.js'
import { purgeInChunks } from '../kernel/purge.js'
import { checkSettlements } from '../kernel/settlements.js'
import { foldStats } from '../kernel/stats.js'
import { SchemaVersions } from '../kernel/migrations.js'
import { migrations, sql } from './generated/assets.js'
import { SqliteFileWatch } from './sqlite-file-watch.js'

export type SqliteDurability = 'full' | 'normal'

export interface SqliteStoreOptions {
  /** The database file; created when missing, unless `create` is false. */
  path: string
  /**
   * Create the database file when it does not exist (default). False: a missing file is a
   * StoreUnavailableError, so a mistyped path is reported instead of starting an empty database.
   */
  create?: boolean
  /**
   * 'full' (default): every commit is fsynced before enqueue resolves, so it survives power loss.
   * 'normal': survives a crash of the process, but an OS crash or power loss may lose the latest
   * commits (docs/backends.md).
   */
  durability?: SqliteDurability
  /** How long a write waits for another process's write lock. Default 5000 ms. */
  busyTimeoutMs?: number
  /** Apply pending migrations on open (default). When false, an outdated schema is an error. */
  migrate?: boolean
  /** Checkpoint and truncate the WAL when it grows past this. Default 64 MiB. */
  walLimitBytes?: number
  /**
   * Permission bits of the database file when this store creates it; SQLite gives its -wal and
   * -shm files the same. Default 0o600, owner only: job payloads may hold personal data. A file
   * that exists keeps its own.
   */
  fileMode?: number
}

const SQLITE_OPTION_KEYS = optionKeys<SqliteStoreOptions>({
  path: true,
  durability: true,
  busyTimeoutMs: true,
  migrate: true,
  walLimitBytes: true,
  fileMode: true,
  create: true,
})

/** The options a `sqlite:` URL may set, by their names in SqliteStoreOptions. */
const SQLITE_URL_PARAMS = ['durability', 'fileMode'] as const satisfies readonly (keyof SqliteStoreOptions)[]

interface JobRow {
  id: number
  queue: string
  name: string
  payload: string
  state: JobState
  priority: number
  run_at: number
  attempts: number
  max_attempts: number
  timeout_ms: number | null
  unique_key: string | null
  lease_token: string | null
  lease_expires_at: number | null
  worker_id: string | null
  last_error: string | null
  result: string | null
  created_at: number
  updated_at: number
  finished_at: number | null
}

type Statement = Database.Statement<unknown[], unknown>
type SqlName = keyof typeof sql

const PURGE_CHUNK = 10_000
/** Write transactions between two checks of the WAL's size. */
const WAL_CHECK_EVERY = 256
/** INTEGER PRIMARY KEY: a signed 64-bit rowid, 19 digits. */
const isJobId = jobIdCheck(19)
// Run with exec, never kept as prepared statements: SQLite applies this pragma when a statement
// is prepared, so a prepared 'synchronous = FULL' switched a 'normal' store to FULL at open.
const SYNC_NORMAL = 'PRAGMA synchronous = NORMAL'
const SYNC_FULL = 'PRAGMA synchronous = FULL'
const DEFAULT_FILE_MODE = 0o600

/**
 * The embedded store: one SQLite file in WAL mode, opened with better-sqlite3. Every write runs
 * in a BEGIN IMMEDIATE transaction (a deferred one could not wait for the lock once it had read),
 * and with durability 'full' every commit is on disk before the call resolves. Calls are
 * synchronous underneath, so a batch costs no round trips: one transaction, one fsync.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite'
  readonly capabilities: StoreCapabilities = {
    crossProcessWake: 'file-watch',
    transactionalEnqueue: false,
    // One transaction and one fsync for all of it: more calls would only add fsyncs, and the
    // writes are synchronous, so nothing could overlap.
    enqueueBatch: { maxItems: Infinity, maxBytes: Infinity, maxCallBytes: Infinity, maxInFlight: 1 },
    delivery: false,
  }
  readonly path: string
  /** Its migrations, and the errors for a file too old or too new. */
  private readonly versions: SchemaVersions<(typeof migrations)[number]>
  readonly durability: SqliteDurability

  private readonly db: Database.Database
  private readonly statements = new Map<SqlName, Statement>()
  private readonly begin: Statement
  private readonly commit: Statement
  private readonly rollback: Statement
  private readonly hub: WakeHub
  private readonly fileWatch: SqliteFileWatch
  private readonly walLimitBytes: number
  private writesSinceWalCheck = 0
  /** The absolute path, and the file it named when the store opened it (device and inode). */
  private readonly absolutePath: string
  private readonly file: { dev: number; ino: number }
  /** Set once the file at the path is no longer the one this store writes to (deleted, replaced). */
  private lost: StoreUnavailableError | null = null
  private closed = false

  static async open(options: SqliteStoreOptions): Promise<SqliteStore> {
    return preparedOrClosed(new SqliteStore(options), async (store) => {
      if (options.migrate ?? true) await store.migrate()
      else store.assertSchemaCurrent()
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
    // Before the file is created: a misspelt option must leave nothing behind.
    assertKnownKeys(options, SQLITE_OPTION_KEYS, '')
    const {
      path,
      durability = 'full',
      busyTimeoutMs = 5000,
      walLimitBytes = 64 * 1024 * 1024,
      fileMode = DEFAULT_FILE_MODE,
      create = true,
    } = options
    if (typeof path !== 'string' || path === '' || path === ':memory:') {
      throw new ValidationError(
        'invalid_option',
        'path',
        'must be the path of a database file (not :memory:)',
      )
    }
    if (durability !== 'full' && durability !== 'normal') {
      throw new ValidationError(
        'invalid_option',
        'durability',
        `must be 'full' or 'normal' (got ${String(durability)})`,
      )
    }
    if (!Number.isInteger(fileMode) || fileMode < 0 || fileMode > 0o777) {
      throw new ValidationError(
        'invalid_option',
        'fileMode',
        `must be permission bits from 0o000 to 0o777, e.g. 0o600 (got ${String(fileMode)})`,
      )
    }
    this.path = path
    this.versions = new SchemaVersions(migrations, { subject: path, versionNoun: 'schema version' })
    this.absolutePath = resolve(path)
    this.durability = durability
    this.walLimitBytes = walLimitBytes
    if (!create && !existsSync(this.absolutePath)) {
      throw new StoreUnavailableError(
        `no SQLite database at ${path}: the file does not exist (check the path; \`ferry migrate\` creates a new database)`,
        { retryable: false },
      )
    }
    try {
      if (create) createFileWithMode(this.absolutePath, fileMode)
      // fileMustExist: a file deleted since the check above is an error too, not created.
      this.db = new Database(path, { timeout: busyTimeoutMs, fileMustExist: !create })
      this.file = identityOf(statSync(this.absolutePath))
      // Takes effect only when the file is new. 10,000 enqueues of 520 bytes in one transaction
      // (bench/RESULTS.md): the commit took 47-63 ms with 4 KiB pages, 21-24 ms with 8 KiB and
      // 14-18 ms with 16 KiB (fewer WAL frames to write), while single-row commits were 2% slower
      // with 8 KiB and 12% slower with 16 KiB. 8 KiB keeps nearly all of both.
      this.db.pragma('page_size = 8192')
      this.db.pragma('journal_mode = WAL')
      // better-sqlite3 builds SQLite with WAL defaulting to NORMAL: FULL must be asked for.
      this.db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`)
      this.db.pragma(`journal_size_limit = ${walLimitBytes}`)
    } catch (error) {
      throw new StoreUnavailableError(`cannot open SQLite database ${path}: ${messageOf(error)}`, {
        cause: error,
      })
    }
    this.begin = this.db.prepare('BEGIN IMMEDIATE')
    this.commit = this.db.prepare('COMMIT')
    this.rollback = this.db.prepare('ROLLBACK')
    this.fileWatch = new SqliteFileWatch(this.db, path, {
      onChange: () => this.hub.broadcast('notified'),
      // A waiting worker must hear of a deleted or replaced file too: woken, its claim reports it.
      onDatabaseFileEvent: () => {
        if (this.fileAtPath() !== 'same') this.hub.broadcast('notified')
      },
    })
    this.hub = new WakeHub({ onWaitingChange: (waiting) => this.fileWatch.setActive(waiting) })
  }

  // ── lifecycle ──────────────────────────────────────────────────────────────────────────────

  async migrate(): Promise<MigrateResult> {
    this.assertOpen('migrate')
    return this.write(() => {
      this.db.exec(
        'CREATE TABLE IF NOT EXISTS ferry_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT',
      )
      const fromVersion = this.schemaVersion()
      const record = this.db.prepare(
        'INSERT INTO ferry_migrations (version, name, applied_at) VALUES (?, ?, ?)',
      )
      for (const migration of this.versions.pending(fromVersion)) {
        this.db.exec(migration.sql)
        record.run(migration.version, migration.name, Date.now())
      }
      return this.versions.result(fromVersion)
    })
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.hub.broadcast('aborted')
    this.fileWatch.close()
    if (this.db?.open) this.db.close()
  }

  // ── producer ───────────────────────────────────────────────────────────────────────────────

  async enqueue({ jobs, tx, now }: EnqueueParams): Promise<EnqueueResult[]> {
    this.assertOpen('enqueue')
    if (tx !== undefined) throw transactionRefused(this.kind)
    if (jobs.length === 0) return []
    const insert = this.statement('enqueue')
    const findUnique = this.statement('enqueue-find-unique').pluck()
    const readyQueues = new Set<string>()
    let earliestScheduled: number | null = null
    const results = this.write((lockedAt) => {
      const at = now ?? lockedAt
      return jobs.map((job): EnqueueResult => {
        const runAt = job.runAt ?? at + job.delayMs
        const ready = runAt <= at
        const { changes, lastInsertRowid } = insert.run(
          job.queue,
          job.name,
          job.payload,
          ready ? 'ready' : 'scheduled',
          job.priority,
          runAt,
          job.maxAttempts,
          job.timeoutMs,
          job.uniqueKey,
          at,
          at,
        )
        if (changes === 0) {
          return { id: String(findUnique.get({ unique_key: job.uniqueKey }) as number), created: false }
        }
        if (ready) readyQueues.add(job.queue)
        else if (earliestScheduled === null || runAt < earliestScheduled) earliestScheduled = runAt
        return { id: String(lastInsertRowid), created: true }
      })
    })
    this.hub.notify(readyQueues)
    this.hub.armDue(earliestScheduled, Date.now())
    if (results.some((result) => result.created)) this.fileWatch.ring()
    return results
  }

  // ── worker hot path ────────────────────────────────────────────────────────────────────────

  async claim(params: ClaimParams): Promise<ClaimedJob[]> {
    this.assertOpen('claim')
    checkClaimParams(params)
    return this.write((lockedAt) => this.claimIn(params, params.now ?? lockedAt), { sync: false }).map(
      toClaimedRow,
    )
  }

  async settle({ settlements, claim, now }: SettleParams): Promise<SettleBatchResult> {
    this.assertOpen('settle')
    if (claim !== undefined) checkClaimParams(claim)
    else if (settlements.length === 0) return { settled: [], claimed: [] }
    checkSettlements(settlements)
    const { settled, rows, rescheduled } = this.write((lockedAt) => {
      const at = now ?? lockedAt
      const { results, rescheduled } = this.settleIn(settlements, at)
      return { settled: results, rows: claim === undefined ? [] : this.claimIn(claim, at), rescheduled }
    })
    if (rescheduled) this.wakeAfterReschedule()
    return { settled, claimed: rows.map(toClaimedRow) }
  }

  /** The claim, inside a write transaction. */
  private claimIn({ queues, names, limit, leaseMs, workerId }: ClaimParams, at: number): JobRow[] {
    this.statement('claim-promote-due').run({ now: at })
    const nextIds = this.statement('claim-next').pluck()
    const ids: number[] = []
    for (const queue of queues) {
      const remaining = limit - ids.length
      if (remaining <= 0) break
      const next =
        names === undefined
          ? (nextIds.all({ queue, limit: remaining }) as number[])
          : this.nextIdsNamed(queue, names, remaining)
      for (const id of next) ids.push(id)
    }
    if (ids.length === 0) return []
    const leased = this.statement('claim').all({
      ids: JSON.stringify(ids),
      token_base: newLeaseTokenBase(),
      lease_expires_at: at + leaseMs,
      worker_id: workerId,
      now: at,
    }) as JobRow[]
    // RETURNING gives no order: restore the claim order.
    const position = new Map(ids.map((id, i) => [id, i]))
    return leased.sort((a, b) => position.get(a.id)! - position.get(b.id)!)
  }

  /**
   * The ids of the next `limit` ready jobs of one queue among these names, in claim order: the
   * first `limit` of each name (one index range each, ferry_jobs_ready_by_name), merged. Jobs of
   * other names cost nothing, however many stand ahead.
   */
  private nextIdsNamed(queue: string, names: readonly string[], limit: number): number[] {
    const nextOfName = this.statement('claim-next-named')
    type Candidate = { id: number; priority: number; run_at: number }
    const candidates: Candidate[] = []
    for (const name of names) {
      for (const row of nextOfName.all({ queue, name, limit }) as Candidate[]) candidates.push(row)
    }
    if (names.length > 1) {
      candidates.sort((a, b) => b.priority - a.priority || a.run_at - b.run_at || a.id - b.id)
    }
    return candidates.slice(0, limit).map((row) => row.id)
  }

  /** The settlements, inside a write transaction. */
  private settleIn(
    settlements: readonly Settlement[],
    at: number,
  ): { results: SettleResult[]; rescheduled: boolean } {
    const completed = this.statement('settle-completed')
    const retry = this.statement('settle-retry')
    const dead = this.statement('settle-dead')
    let rescheduled = false
    const results = settlements.map((s): SettleResult => {
      let changes: number
      switch (s.kind) {
        case 'completed':
          changes = completed.run({
            id: s.id,
            lease_token: s.leaseToken,
            result: s.result === undefined ? null : JSON.stringify(s.result),
            now: at,
          }).changes
          break
        case 'retry':
        case 'snoozed':
          changes = retry.run({
            id: s.id,
            lease_token: s.leaseToken,
            state: s.runAt <= at ? 'ready' : 'scheduled',
            run_at: s.runAt,
            last_error: s.kind === 'retry' ? JSON.stringify(s.error) : null,
            attempts_back: s.kind === 'snoozed' ? 1 : 0,
            now: at,
          }).changes
          rescheduled ||= changes > 0
          break
        case 'dead':
          changes = dead.run({
            id: s.id,
            lease_token: s.leaseToken,
            last_error: JSON.stringify(s.error),
            now: at,
          }).changes
          break
      }
      return changes === 1 ? 'ok' : 'lease_lost'
    })
    return { results, rescheduled }
  }

  async renew({ leases, leaseMs, delivered, now }: RenewParams): Promise<SettleResult[]> {
    this.assertOpen('renew')
    if (delivered === true) throw deliveryRefused(this.kind, 'delivered')
    assertPositiveInteger(leaseMs, 'leaseMs')
    if (leases.length === 0) return []
    const renew = this.statement('renew')
    return this.write((lockedAt) => {
      const at = now ?? lockedAt
      return leases.map(({ id, leaseToken }): SettleResult => {
        const { changes } = renew.run({
          id,
          lease_token: leaseToken,
          lease_expires_at: at + leaseMs,
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
    this.hub.armDue(this.nextDueAt(), Date.now())
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
  }: RecoverParams = {}): Promise<RecoverResult> {
    this.assertOpen('recoverExpired')
    assertPositiveInteger(limit, 'limit')
    const result: RecoverResult = { retried: [], dead: [], clamped: 0 }
    // Without leases given: those expired now, found by a read first, so the usual answer (none)
    // takes no write lock. Clamped leases were not expired, so they are not among them.
    const candidates = leases ?? this.read(() => this.expiredLeases(now ?? Date.now(), limit))
    if (clampLeases) {
      result.clamped = this.write(
        (lockedAt) => this.statement('recover-expired-clamp-leases').run({ now: now ?? lockedAt }).changes,
      )
    }
    if (candidates.length === 0) return result
    const rows = this.write(
      (lockedAt) =>
        this.statement('recover-expired').all({
          leases: JSON.stringify(
            candidates.map(({ id, leaseToken, leaseExpiresAt }) => ({
              id: Number(id),
              token: leaseToken,
              expiresAt: leaseExpiresAt,
            })),
          ),
          now: now ?? lockedAt,
        }) as { id: number; state: JobState }[],
    )
    for (const row of rows.sort((a, b) => a.id - b.id)) {
      ;(row.state === 'dead' ? result.dead : result.retried).push(String(row.id))
    }
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
    assertPositiveInteger(limit, 'limit')
    const at = now ?? Date.now()
    return this.read(() => ({
      now: at,
      leases: this.expiredLeases(at, limit),
      nextExpiresAt: this.statement('find-expired-leases-next-expiry').pluck().get({ now: at }) as number | null,
    }))
  }

  private expiredLeases(now: number, limit: number): ExpiredLease[] {
    const rows = this.statement('find-expired-leases').all({ now, limit }) as {
      id: number
      lease_token: string
      lease_expires_at: number
      lease_ms: number
    }[]
    return rows.map((row) => ({
      id: String(row.id),
      leaseToken: row.lease_token,
      leaseExpiresAt: row.lease_expires_at,
      leaseMs: row.lease_ms,
    }))
  }

  // ── admin ──────────────────────────────────────────────────────────────────────────────────

  async listJobs(params: ListJobsParams = {}): Promise<JobPage> {
    this.assertOpen('listJobs')
    const checked = checkListJobsParams(params, isJobId)
    if (checked.ids !== undefined) {
      const getJob = this.statement('list-jobs-by-id')
      const rows = this.read(() => checked.ids.map((id) => getJob.get({ id }) as JobRow | undefined))
      return { jobs: rows.flatMap((row) => (row === undefined ? [] : [toJob(row)])), nextCursor: null }
    }
    const { state, queue, limit, cursor } = checked
    const rows = this.read(
      () =>
        this.statement('list-jobs').all({
          state: state ?? null,
          queue: queue ?? null,
          before_id: cursor ?? null,
          limit: limit + 1,
        }) as JobRow[],
    )
    const more = rows.length > limit
    const page = more ? rows.slice(0, limit) : rows
    return { jobs: page.map(toJob), nextCursor: more ? String(page[page.length - 1]!.id) : null }
  }

  async stats(params: StatsParams = {}): Promise<QueueStats[]> {
    this.assertOpen('stats')
    checkStatsParams(params)
    const { now, recentWindowMs = 60_000 } = params
    const at = now ?? Date.now()
    type CountRow = { queue: string; state: JobState; count: number }
    const [rows, recent] = this.read(() => [
      this.statement('stats').all({ now: at }) as CountRow[],
      this.statement('stats-recent').all({ since: at - recentWindowMs }) as CountRow[],
    ])
    return foldStats(
      [
        ...rows.map(({ queue, state, count }) => ({ queue, of: state, count })),
        ...recent.map(({ queue, state, count }) => ({
          queue,
          of: state === 'completed' ? ('recentCompleted' as const) : ('recentDead' as const),
          count,
        })),
      ],
      recentWindowMs,
    )
  }

  async retry(params: RetryParams): Promise<number> {
    this.assertOpen('retry')
    checkRetryParams(params)
    const { ids, allDead = false, queue, now } = params
    const at = now ?? Date.now()
    const queues = this.write(() => {
      if (allDead)
        return this.statement('retry-all-dead')
          .pluck()
          .all({ queue: queue ?? null, now: at }) as string[]
      const retry = this.statement('retry').pluck()
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
    const cancel = this.statement('cancel')
    return this.write(() => {
      let count = 0
      for (const id of ids)
        if (isJobId(id)) count += cancel.run({ id, last_error: lastError, now: at }).changes
      return count
    })
  }

  async purge(params: PurgeParams): Promise<number> {
    this.assertOpen('purge')
    checkPurgeParams(params)
    const { state, olderThanMs = 0, queue, now } = params
    const finishedBefore = (now ?? Date.now()) - olderThanMs
    const purge = this.statement('purge')
    return purgeInChunks(PURGE_CHUNK, (limit) => ({
      deleted: this.write(
        () => purge.run({ state, finished_before: finishedBefore, queue: queue ?? null, limit }).changes,
      ),
    }))
  }

  // ── worker control ─────────────────────────────────────────────────────────────────────────

  async control(params: ControlParams = {}): Promise<ControlRecord> {
    this.assertOpen('control')
    checkControlParams(params)
    const { requestStop = false, now } = params
    if (requestStop) {
      this.write(() => this.statement('control-request-stop').run({ now: now ?? Date.now() }))
      this.hub.broadcast('notified')
      this.fileWatch.ring()
    }
    const at = this.read(() => this.statement('control').pluck().get() as number | undefined)
    return { stopRequestedAt: at ?? null }
  }

  // ── internals ──────────────────────────────────────────────────────────────────────────────

  private statement(name: SqlName): Statement {
    let statement = this.statements.get(name)
    if (statement === undefined) {
      statement = this.db.prepare(sql[name])
      this.statements.set(name, statement)
    }
    return statement
  }

  /**
   * Runs fn in a BEGIN IMMEDIATE transaction; commits (and, with 'full', fsyncs) before returning.
   *
   * `sync: false` commits without the fsync even under 'full', for a claim alone: losing a claim to
   * a power cut only puts its jobs back to ready (their worker died with the machine anyway), and
   * the next synced commit makes it durable, since an fsync of the WAL covers every earlier
   * write to it. It takes the claim's fsync out of the wake-up path: 2.2 of the 2.7 ms from an
   * enqueue in another process to the handler's start (bench wake-latency, p50, before this).
   *
   * fn gets the time read once the write lock is held: BEGIN IMMEDIATE may wait up to busy_timeout
   * for another process's commit, and a lease or run time computed from a clock read before that
   * wait would be short by it (the chaos run found claims handed out with their lease half gone).
   */
  private write<T>(fn: (lockedAt: number) => T, { sync = true }: { sync?: boolean } = {}): T {
    let result: T
    const relaxed = !sync && this.durability === 'full'
    try {
      if (relaxed) this.db.exec(SYNC_NORMAL)
      this.begin.run()
    } catch (error) {
      if (relaxed) this.db.exec(SYNC_FULL)
      throw wrapDriverError(error, describeDriverError(this.path))
    }
    try {
      result = fn(Date.now())
      this.commit.run()
    } catch (error) {
      if (this.db.inTransaction) this.rollback.run()
      throw wrapDriverError(error, describeDriverError(this.path))
    } finally {
      if (relaxed) this.db.exec(SYNC_FULL)
    }
    // After the commit: a file deleted or replaced while this transaction ran got it too. One stat,
    // about 2 µs, against a commit's fsync of milliseconds.
    this.assertSameFile()
    if (++this.writesSinceWalCheck >= WAL_CHECK_EVERY) {
      this.writesSinceWalCheck = 0
      this.limitWal()
    }
    return result
  }

  private read<T>(fn: () => T): T {
    this.assertSameFile()
    try {
      return fn()
    } catch (error) {
      throw wrapDriverError(error, describeDriverError(this.path))
    }
  }

  /**
   * SQLite checkpoints the WAL on its own, but a reader that is always active can stop it from
   * ever restarting the WAL, which then grows without bound: past the limit, force it.
   */
  private limitWal(): void {
    let size: number
    try {
      size = statSync(`${this.path}-wal`).size
    } catch {
      return
    }
    if (size > this.walLimitBytes) this.db.pragma('wal_checkpoint(TRUNCATE)')
  }

  private nextDueAt(): number | null {
    return this.read(() => this.statement('wait-for-work-next-due').pluck().get() as number | null)
  }

  private wakeAfterReschedule(): void {
    this.hub.armDue(this.nextDueAt(), Date.now())
    this.fileWatch.ring()
  }

  private schemaVersion(): number {
    const exists = this.db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ferry_migrations'")
      .pluck()
      .get()
    if (exists === undefined) return 0
    return (
      (this.db.prepare('SELECT coalesce(max(version), 0) FROM ferry_migrations').pluck().get() as number) ?? 0
    )
  }

  private assertSchemaCurrent(): void {
    this.versions.assertCurrent(this.read(() => this.schemaVersion()))
  }

  private assertOpen(operation: string): void {
    assertOpen(this.closed, operation)
    if (this.lost !== null) throw this.lost
  }

  /**
   * Throws, for good, once the path no longer names the file this store opened: better-sqlite3
   * keeps writing to the open file after it was deleted or replaced (a restore that moved another
   * file into place, a cleanup that removed it), and every commit it acknowledges is lost with
   * the old file, while a new process at the path starts an empty queue.
   */
  private assertSameFile(): void {
    if (this.lost !== null) throw this.lost
    const found = this.fileAtPath()
    if (found === 'same') return
    this.lost = new StoreUnavailableError(
      `SQLite ${this.path}: the database file was ${found === 'deleted' ? 'deleted' : 'replaced by another file'} ` +
        'while this store had it open, so what it writes goes to a file no other process can see; ' +
        'stop every process using it, then open the store again',
      { retryable: false },
    )
    this.hub.broadcast('notified')
    throw this.lost
  }

  /** Whether the path still names the file this store opened ('same' too when it cannot be told). */
  private fileAtPath(): 'same' | 'deleted' | 'replaced' {
    let found: Stats
    try {
      found = statSync(this.absolutePath)
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'deleted' : 'same'
    }
    return found.dev === this.file.dev && found.ino === this.file.ino ? 'same' : 'replaced'
  }
}

/**
 * Creates the database file with these permission bits, exactly (whatever the umask), when it
 * does not exist yet; SQLite then creates its -wal and -shm files with the same bits.
 */
function createFileWithMode(path: string, mode: number): void {
  let fd: number
  try {
    fd = openSync(path, 'wx', mode)
  } catch (error) {
    // It exists (perhaps another process just created it): its own mode stands.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return
    throw error
  }
  try {
    chmodSync(path, mode)
  } finally {
    closeSync(fd)
  }
}

function identityOf(stats: Stats): { dev: number; ino: number } {
  return { dev: stats.dev, ino: stats.ino }
}

/**
 * Parses `sqlite:./path.db`, `sqlite:///absolute/path.db`, with optional `?durability=normal` and
 * `?fileMode=0640` (octal permission bits for a file the store creates).
 */
export function parseSqliteUrl(url: string): SqliteStoreOptions {
  const rest = url.replace(/^sqlite:/i, '')
  const [location = '', query = ''] = rest.split('?', 2)
  const path = location.startsWith('//') ? location.slice(2) : location
  const params = new URLSearchParams(query)
  assertKnownKeys(Object.fromEntries(params), SQLITE_URL_PARAMS, 'store')
  const options: SqliteStoreOptions = { path }
  const durability = params.get('durability')
  if (durability !== null) options.durability = durability as SqliteDurability
  const fileMode = params.get('fileMode')
  if (fileMode !== null) options.fileMode = /^0?[0-7]{3}$/.test(fileMode) ? parseInt(fileMode, 8) : NaN
  return options
}

function toJob(row: JobRow): Job {
  return {
    id: String(row.id),
    queue: row.queue,
    name: row.name,
    payload: JSON.parse(row.payload) as unknown,
    state: row.state,
    priority: row.priority,
    runAt: row.run_at,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    timeoutMs: row.timeout_ms,
    uniqueKey: row.unique_key,
    lastError: row.last_error === null ? null : (JSON.parse(row.last_error) as JobError),
    result: row.result === null ? null : (JSON.parse(row.result) as unknown),
    workerId: row.worker_id,
    leaseExpiresAt: row.lease_expires_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
  }
}

function toClaimedRow(row: JobRow): ClaimedJob {
  return toClaimedJob(toJob(row), row.lease_token!)
}

/** better-sqlite3's own errors; any other passes through. */
function describeDriverError(path: string): (error: unknown) => string | null {
  return (error) =>
    error instanceof Database.SqliteError ? `SQLite ${path}: ${error.code}: ${error.message}` : null
}
