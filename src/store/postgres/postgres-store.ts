import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { StoreClosedError, ValidationError } from '../../core/errors.js'
import { type ClaimedJob, type Job, type JobError, type JobState, type NewJob } from '../../core/job.js'
import { giveBack, type Settlement } from '../../core/outcome.js'
import { assertInteger, assertKnownKeys, assertQueueList, optionKeys } from '../../core/validate.js'
import {
  DELIVERY_LEASE_MS,
  type CancelParams,
  type ClaimParams,
  type ControlParams,
  type ControlRecord,
  type FindExpiredLeasesParams,
  type FindExpiredLeasesResult,
  type EnqueueParams,
  type EnqueueResult,
  type JobPage,
  type ListJobsParams,
  type MigrateResult,
  type PurgeParams,
  type QueueStats,
  type RecoverParams,
  type RecoverResult,
  type RenewParams,
  type RetryParams,
  type SettleBatchResult,
  type SettleParams,
  type SettleResult,
  type StatsParams,
  type Store,
  type StoreCapabilities,
  type WaitClaim,
  type WaitParams,
  type WaitResult,
} from '../store.js'
import {
  assertPositiveInteger,
  checkClaimParams,
  checkCancelParams,
  checkNames,
  checkListJobsParams,
  checkControlParams,
  checkPurgeParams,
  checkRetryParams,
  checkStatsParams,
  RECOVER_LIMIT_DEFAULT,
} from '../params.js'
import { assertOpen } from '../kernel/assert-open.js'
import { wrapDriverError } from '../kernel/driver-errors.js'
import { compareIds, jobIdCheck } from '../kernel/job-ids.js'
import { toClaimedJob } from '../kernel/jobs.js'
import { purgeInChunks } from '../kernel/purge.js'
import { checkSettlements, foldResults } from '../kernel/settlements.js'
import { foldStats } from '../kernel/stats.js'
import { osErrorOf, serverAddress } from '../connection-error.js'
import { WakeHub } from '../wake-hub.js'
import { sql } from './generated/assets.js'
import { PostgresSchema, quoteIdent } from './postgres-migrations.js'

// The client: pg 8.23.1, chosen over postgres 3.4.9 by measurement on this 2-core machine
// (PostgreSQL 15 on localhost, medians of two runs of a script timing each client):
//   claim-shaped round trip (unnest of 5 queues, LATERAL index scan, LIMIT 10), p50 of 3,000:
//     pg with a named (prepared) statement 0.13-0.15 ms, pg unnamed 0.23-0.33 ms, postgres 0.09-0.10 ms
//   one INSERT … SELECT FROM unnest(arrays) of 10,000 jobs of 520 bytes: pg 310-390 ms, postgres
//     310-345 ms (the server's work: the same with a JSON parameter, json_to_recordset)
//   NOTIFY from a pooled connection to a LISTEN callback, p50 of 300: pg 0.15-0.23 ms, postgres 0.14-0.16 ms
// postgres is ~0.05 ms faster per bare round trip; everything else is the server's and equal. The
// hot path batches (a settle with a claim carries many jobs), so 0.05 ms per round trip is far below the
// targets' margins, while pg is the client most applications already hold a transaction of (the
// `tx` of a transactional enqueue), gives the listening connection's life cycle to us explicitly,
// and is the one DESIGN.md names. Hot statements are named (prepared once per connection): that
// halves pg's round trip.

export interface PostgresStoreOptions {
  /** A libpq-style URL, e.g. postgres://user:password@host:5432/database (no Ferry parameters). */
  connectionString: string
  /** The PostgreSQL schema holding Ferry's tables and functions. Default 'ferry'. */
  schema?: string
  /** Apply pending migrations on open (default). When false, an outdated schema is an error. */
  migrate?: boolean
  /** Connections in the pool, besides the one that listens for notifications. Default 10. */
  poolSize?: number
}

const POSTGRES_OPTION_KEYS = optionKeys<PostgresStoreOptions>({
  connectionString: true,
  schema: true,
  migrate: true,
  poolSize: true,
})

/** The options a postgres:// URL may set for Ferry, by their names in PostgresStoreOptions. */
const POSTGRES_URL_PARAMS = ['schema', 'poolSize'] as const satisfies readonly (keyof PostgresStoreOptions)[]

/**
 * The query parameters of a connection string that pg 8.23 acts on (pg-connection-string's parse
 * and pg's ConnectionParameters read them). Any other is dropped by the driver without a word, so
 * it is refused: a typo of `sslmode` would connect without TLS. `connect_timeout` and `binary` are
 * not here because pg reads them from its options object only, never from the URL.
 */
const DRIVER_URL_PARAMS = [
  'host',
  'port',
  'user',
  'password',
  'ssl',
  'sslmode',
  'sslcert',
  'sslkey',
  'sslrootcert',
  'sslnegotiation',
  'uselibpqcompat',
  'application_name',
  'fallback_application_name',
  'client_encoding',
  'options',
  'statement_timeout',
  'lock_timeout',
  'idle_in_transaction_session_timeout',
  'query_timeout',
] as const

/**
 * What a transactional enqueue needs from the caller's connection: pg's Client and PoolClient
 * (inside BEGIN … COMMIT), or anything else with the same `query`.
 */
export interface PostgresQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>
}

interface JobRow {
  id: string
  queue: string
  name: string
  payload: string
  state: JobState
  priority: number
  run_at: string
  attempts: number
  max_attempts: number
  timeout_ms: number | null
  unique_key: string | null
  lease_token: string | null
  lease_expires_at: string | null
  worker_id: string | null
  last_error: string | null
  result: string | null
  created_at: string
  updated_at: string
  finished_at: string | null
}

type SqlName = keyof typeof sql

export const DEFAULT_SCHEMA = 'ferry'
const DEFAULT_PORT = 5432
/** Lower case only, so the name never needs case-sensitive quoting; short enough that the
 * notification channel `ferry:<schema>` stays within PostgreSQL's 63-byte identifiers. */
const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,47}$/
const PURGE_CHUNK = 10_000
/** bigint, kept to 18 digits so that every id that passes is one the column can hold. */
const isJobId = jobIdCheck(18)
/** The listening connection comes back after a drop with this backoff (doubling, with jitter). */
const RECONNECT_MIN_MS = 100
const RECONNECT_MAX_MS = 5_000
/**
 * A delivery, as an enqueue sends it on the store's channel (functions/deliver.sql): the
 * waiter's id and its leased rows (as arrays of the jobs columns, bigints as text), or only their
 * ids when the rows would not fit in a notification.
 */
interface Delivery {
  w: string
  jobs?: unknown[][]
  ids?: string[]
}

/** A waiter for delivery (waitForWork with a claim), as registered (sql/wait-for-work.sql). */
type Registration = WaitClaim & {
  id: string
  queues: readonly string[]
  names: readonly string[] | undefined
}

/** A waiter that may be handed jobs: `rerouted` when they were meant for an earlier wait. */
interface DeliveryWaiter {
  registration: Registration
  take(delivery: Delivery, rerouted: boolean): void
}

/**
 * The PostgreSQL store: jobs in one table of its own schema, shared by workers on many hosts.
 * Every hot-path call is one round trip: enqueue (a whole batch), claim (any number of queues,
 * FOR UPDATE SKIP LOCKED), settle (a whole batch) and settle with a claim are single statements or
 * functions of the schema (functions/). Waiting workers are woken by LISTEN/NOTIFY
 * on a connection of their own, which comes back by itself after a drop or a server restart; an
 * enqueue hands an idle worker its jobs directly, claimed in the enqueue's own transaction
 * (waitForWork with a claim, functions/deliver.sql).
 *
 * Without an explicit `now`, times are the server's clock (now_ms()), so hosts whose clocks differ
 * still agree on what is due and which leases ran out.
 */
export class PostgresStore implements Store {
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
  }
  readonly schema: string
  /** Its migrations and functions: migrate() and the check of open({ migrate: false }). */
  private readonly schemaFiles: PostgresSchema

  /** host:port, for the messages of connection errors. */
  private readonly server: string
  private readonly pool: pg.Pool
  private readonly config: pg.ClientConfig
  private readonly texts: Record<SqlName, string>
  private readonly channel: string
  /** This store's own channel, on which enqueues hand jobs to its waiters (waitForWork with a claim). */
  private readonly deliveryChannel: string
  /** Makes this store's waiter ids unique among every store of the schema. */
  private readonly waiterTag = randomBytes(8).toString('hex')
  private waiterCount = 0
  /** The waiters that may be handed jobs, by id; each leaves once handed some. */
  private readonly deliveries = new Map<string, DeliveryWaiter>()
  /** Deliveries that came too late for their waiter, being put back in line (close awaits them). */
  private readonly givingBack = new Set<Promise<void>>()
  /** The advisory lock the listening connection holds while it lives: what tells an enqueue that
   * a waiter registered with this key is still there. A new key for each connection. */
  private lockKey: string | null = null
  private readonly hub: WakeHub
  /** Queues of the current waiters, with how many wait on each: what the safety net checks. */
  private readonly waitingQueues = new Map<string, number>()
  private listener: pg.Client | null = null
  private listening: Promise<void> | null = null
  private reconnectTimer: NodeJS.Timeout | null = null
  private reconnectAttempts = 0
  /** This host's clock minus the server's, from the last wait-for-work query: turns a server run
   * time into a local timer. */
  private clockOffsetMs = 0
  /** The last stop request this store has seen (read at open): a different one wakes every waiter,
   * even when its notification was sent before this store listened. */
  private knownStopAt: number | null = null
  private closed = false

  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    // Before connecting: a misspelt option must not migrate a schema it did not mean.
    assertKnownKeys(options, POSTGRES_OPTION_KEYS, '')
    const store = new PostgresStore(options)
    try {
      if (options.migrate ?? true) await store.migrate()
      else await store.assertSchemaCurrent()
      await store.control()
    } catch (error) {
      await store.close()
      throw error
    }
    return store
  }

  /**
   * Connects without checking the schema, applies the pending migrations and closes: what
   * `ferry migrate` runs, so that it can say what it applied (open() would have applied it).
   */
  static async applyMigrations(options: PostgresStoreOptions): Promise<MigrateResult> {
    assertKnownKeys(options, POSTGRES_OPTION_KEYS, '')
    const store = new PostgresStore(options)
    try {
      return await store.migrate()
    } finally {
      await store.close()
    }
  }

  private constructor({ connectionString, schema = DEFAULT_SCHEMA, poolSize = 10 }: PostgresStoreOptions) {
    if (typeof connectionString !== 'string' || connectionString === '') {
      throw new ValidationError('invalid_option', 'connectionString', 'must be a postgres:// URL')
    }
    assertDriverParams(connectionString)
    if (typeof schema !== 'string' || !SCHEMA_PATTERN.test(schema) || schema.startsWith('pg_')) {
      throw new ValidationError(
        'invalid_option',
        'schema',
        `must be 1 to 48 of a-z, 0-9 and _, not starting with a digit or pg_ (got ${JSON.stringify(schema)})`,
      )
    }
    assertInteger(poolSize, 'poolSize', { min: 1, max: 1000 })
    this.schema = schema
    this.schemaFiles = new PostgresSchema(schema)
    this.channel = `ferry:${schema}`
    // At most 6 + 48 + 9 = 63 bytes: PostgreSQL's identifier limit.
    this.deliveryChannel = `ferry:${schema}:${randomBytes(4).toString('hex')}`
    this.texts = Object.fromEntries(
      Object.entries(sql).map(([name, text]) => [name, this.schemaFiles.interpolate(text)]),
    ) as Record<SqlName, string>
    this.server = serverOf(connectionString)
    this.config = { connectionString, keepAlive: true, keepAliveInitialDelayMillis: 10_000 }
    this.pool = new pg.Pool({ ...this.config, max: poolSize, idleTimeoutMillis: 30_000 })
    // An idle pooled connection that dies (server restart, pg_terminate_backend) is dropped by the
    // pool, which reports it here; the next query opens a fresh one. Without a listener the error
    // would crash the process.
    this.pool.on('error', () => {})
    // The safety net also brings back a listening connection that is gone.
    this.hub = new WakeHub({
      safetyNet: () => {
        // Every name: one check for all the waiters of this store, whatever their names. A queue
        // holding only jobs that its waiters do not handle wakes them once per safety-net check.
        void this.check([...this.waitingQueues.keys()], undefined).catch(() => {})
        if (this.listener === null) void this.listen().catch(() => {})
      },
    })
  }

  // ── lifecycle ──────────────────────────────────────────────────────────────────────────────

  async migrate(): Promise<MigrateResult> {
    this.assertOpen('migrate')
    return await this.withClient((client) => this.schemaFiles.migrate(client))
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.hub.broadcast('aborted')
    if (this.reconnectTimer !== null) clearTimeout(this.reconnectTimer)
    this.reconnectTimer = null
    const listener = this.listener
    this.listener = null
    this.listening = null
    this.lockKey = null
    // Ending the listening connection releases its lock: from then on no enqueue hands this store
    // jobs. Jobs handed to a waiter that closing ended go back in line before the pool goes.
    await listener?.end().catch(() => {})
    while (this.givingBack.size > 0) await Promise.allSettled([...this.givingBack])
    await this.pool.end().catch(() => {})
  }

  // ── producer ───────────────────────────────────────────────────────────────────────────────

  async enqueue({ jobs, tx, now }: EnqueueParams): Promise<EnqueueResult[]> {
    this.assertOpen('enqueue')
    if (tx !== undefined) return this.enqueueInTransaction(tx, jobs, now)
    if (jobs.length === 0) return []
    const results = await this.enqueueWith(
      (text, values) => this.query(text, values, 'enqueue'),
      jobs,
      now,
      binaryTextArray,
      true,
    )
    // Workers of this process are woken at once; those elsewhere by the NOTIFY of the commit. Not
    // while a waiter of this process may be handed jobs: woken here, before its delivery arrives
    // (the listening connection hears of it before the wake-up of the same commit), it would
    // have to give them back.
    if (this.deliveries.size === 0) this.hub.notify(readyQueuesOf(jobs, now))
    return results
  }

  /**
   * Enqueues with the caller's own connection, inside the caller's transaction: rolled back, no
   * job; committed, the jobs are visible and the workers woken (NOTIFY is delivered on commit).
   * Bypasses group commit, since the caller's transaction is the batch.
   */
  private async enqueueInTransaction(
    tx: unknown,
    jobs: readonly NewJob[],
    now: number | undefined,
  ): Promise<EnqueueResult[]> {
    if (!isQueryable(tx)) {
      throw new ValidationError(
        'invalid_option',
        'tx',
        "must be the pg Client or PoolClient running the caller's transaction (it has no query method)",
      )
    }
    if (jobs.length === 0) return []
    return this.enqueueWith(
      async (text, values) => (await tx.query(text, values)).rows as Record<string, unknown>[],
      jobs,
      now,
      (items) => items,
      // No delivery: the leases would start while the caller's transaction may stay open long.
      false,
    )
  }

  private async enqueueWith(
    run: (text: string, values: unknown[]) => Promise<Record<string, unknown>[]>,
    jobs: readonly NewJob[],
    now: number | undefined,
    textArray: (items: (string | null)[]) => unknown,
    deliver: boolean,
  ): Promise<EnqueueResult[]> {
    const n = jobs.length
    const queue = new Array<string>(n)
    const name = new Array<string>(n)
    const payload = new Array<string>(n)
    const priority = new Array<number>(n)
    const runAt = new Array<number | null>(n)
    const delayMs = new Array<number>(n)
    const maxAttempts = new Array<number>(n)
    const timeoutMs = new Array<number | null>(n)
    const uniqueKey = new Array<string | null>(n)
    for (let i = 0; i < n; i++) {
      const job = jobs[i]!
      queue[i] = job.queue
      name[i] = job.name
      payload[i] = job.payload
      priority[i] = job.priority
      runAt[i] = job.runAt
      delayMs[i] = job.delayMs
      maxAttempts[i] = job.maxAttempts
      timeoutMs[i] = job.timeoutMs
      uniqueKey[i] = job.uniqueKey
    }
    return (await run(this.texts.enqueue, [
      textArray(queue),
      textArray(name),
      textArray(payload),
      priority,
      runAt,
      delayMs,
      maxAttempts,
      timeoutMs,
      textArray(uniqueKey),
      now ?? null,
      deliver,
    ])) as unknown as EnqueueResult[]
  }

  // ── worker hot path ────────────────────────────────────────────────────────────────────────

  async claim(params: ClaimParams): Promise<ClaimedJob[]> {
    this.assertOpen('claim')
    checkClaimParams(params)
    const { queues, names, limit, leaseMs, workerId, now } = params
    const rows = await this.query<JobRow>(
      this.texts.claim,
      [queues, limit, leaseMs, workerId, now ?? null, names ?? null],
      'claim',
    )
    return rows.map(toClaimedRow)
  }

  async settle({ settlements, claim, now }: SettleParams): Promise<SettleBatchResult> {
    this.assertOpen('settle')
    if (claim === undefined) {
      if (settlements.length === 0) return { settled: [], claimed: [] }
      checkSettlements(settlements)
      const [row] = await this.query<{ lost: number[]; locked: number[] }>(
        this.texts.settle,
        [...settlementArrays(settlements), now ?? null],
        'settle',
      )
      return { settled: settleResults(settlements.length, row!), claimed: [] }
    }
    checkClaimParams(claim)
    checkSettlements(settlements)
    const rows = await this.query<JobRow & { lost: number[]; locked: number[] }>(
      this.texts['settle-and-claim'],
      [
        ...settlementArrays(settlements),
        claim.queues,
        claim.limit,
        claim.leaseMs,
        claim.workerId,
        now ?? null,
        claim.names ?? null,
      ],
      'settle-and-claim',
    )
    return {
      settled: settleResults(settlements.length, rows[0]!),
      claimed: rows.filter((row) => row.id !== null).map(toClaimedRow),
    }
  }

  async renew({ leases, leaseMs, delivered = false, now }: RenewParams): Promise<SettleResult[]> {
    this.assertOpen('renew')
    if (delivered) return this.takeDelivered(leases, leaseMs, now)
    assertPositiveInteger(leaseMs, 'leaseMs')
    if (leases.length === 0) return []
    const rows = await this.query<{ ord: number; result: SettleResult }>(
      this.texts.renew,
      [
        leases.map((l) => (isJobId(l.id) ? l.id : null)),
        leases.map((l) => l.leaseToken),
        leaseMs,
        now ?? null,
      ],
      'renew',
    )
    return rows.map((row) => row.result)
  }

  /** renew with `delivered`: the worker takes jobs it was handed, before it starts them. */
  private async takeDelivered(
    leases: RenewParams['leases'],
    leaseMs: number,
    now: number | undefined,
  ): Promise<SettleResult[]> {
    assertPositiveInteger(leaseMs, 'leaseMs')
    if (leases.length === 0) return []
    const rows = await this.query<{ ord: number }>(
      this.texts['take-delivered'],
      [
        leases.map((l) => (isJobId(l.id) ? l.id : null)),
        leases.map((l) => l.leaseToken),
        leaseMs,
        now ?? null,
      ],
      'take-delivered',
    )
    return foldResults(leases.length, 'lease_lost', [['ok', rows.map((row) => row.ord - 1)]])
  }

  /**
   * With `claim`, the waiter is registered (sql/wait-for-work.sql) so that an enqueue may claim
   * jobs for it and send them on this store's delivery channel (functions/deliver.sql). A
   * delivery that arrives before the wait has ended otherwise ends it; one that arrives after goes
   * to the same worker's next wait or back in line (onDelivery).
   */
  async waitForWork(params: WaitParams): Promise<WaitResult> {
    this.assertOpen('waitForWork')
    if (params.claim !== undefined) {
      const { limit, leaseMs, workerId } = params.claim
      checkClaimParams({ queues: params.queues, names: params.names, limit, leaseMs, workerId })
    }
    return this.wait(params, params.claim ?? null)
  }

  private async wait(params: WaitParams, claim: WaitClaim | null): Promise<WaitResult> {
    assertQueueList(params.queues)
    checkNames(params.names)
    const { queues, names, signal, timeoutMs } = params
    if (signal?.aborted === true) return { reason: 'aborted', jobs: [] }
    // Ends this waiter alone (a delivery); the caller's signal ends it too.
    const ended = new AbortController()
    const onAbort = (): void => ended.abort()
    signal?.addEventListener('abort', onAbort, { once: true })
    for (const queue of queues) this.waitingQueues.set(queue, (this.waitingQueues.get(queue) ?? 0) + 1)
    const registration: Registration | null =
      claim === null ? null : { ...claim, queues, names, id: `${this.waiterTag}:${++this.waiterCount}` }
    let delivery: Delivery | null = null
    let registeredStill = false
    let handOver = (): void => {}
    const handedOver = new Promise<'delivered'>((resolve) => (handOver = () => resolve('delivered')))
    if (registration !== null) {
      this.deliveries.set(registration.id, {
        registration,
        take: (handed, rerouted) => {
          delivery = handed
          registeredStill = rerouted
          handOver()
          // The jobs start first: ending the hub's wait (the signal's listeners) took 0.18 ms p50
          // between the NOTIFY and the handler (postgres-wake, traced), so it waits a turn.
          setImmediate(() => ended.abort())
        },
      })
    }
    let waiting = true
    // Once LISTEN is active, look at the queues once (and register): whatever committed before
    // that shows up here, whatever commits after it is delivered or notified. Errors leave the
    // waiter waiting: the listening connection retries, and a store error will show in the
    // worker's next claim. Resolves to whether the waiter may have been registered.
    const registered = this.listen()
      .then(() => (waiting ? this.check(queues, names, registration) : false))
      .catch(() => registration !== null)
    const reason = await Promise.race([
      this.hub.wait({ queues, timeoutMs, signal: ended.signal }),
      handedOver,
    ])
    waiting = false
    signal?.removeEventListener('abort', onAbort)
    for (const queue of queues) {
      const count = (this.waitingQueues.get(queue) ?? 1) - 1
      if (count === 0) this.waitingQueues.delete(queue)
      else this.waitingQueues.set(queue, count)
    }
    if (registration === null) return { reason, jobs: [] }
    this.deliveries.delete(registration.id)
    // From here on, a delivery to this waiter goes elsewhere (onDelivery).
    const handed = delivery as Delivery | null
    if (handed === null || registeredStill) {
      // Its registration is still there: take it out, so that no enqueue claims for it any more
      // (fire and forget: its lock covers a failure).
      void registered.then((may) => {
        if (may && !this.closed) {
          this.query(this.texts['wait-for-jobs-end'], [registration.id], 'wait-for-jobs-end').catch(() => {})
        }
      })
    }
    if (handed !== null) {
      if (this.closed) {
        this.giveBackDelivery(handed)
        return { reason: 'aborted', jobs: [] }
      }
      try {
        const jobs = await this.deliveredJobs(handed)
        if (jobs.length > 0) return { reason: 'delivered', jobs }
      } catch {
        // Unreadable: the leases run out and recoverExpired puts the jobs back.
      }
      return { reason: 'notified', jobs: [] }
    }
    return { reason, jobs: [] }
  }

  /** The jobs of a delivery, in claim order: from its message, or read by id when they did not fit. */
  private async deliveredJobs(delivery: Delivery): Promise<ClaimedJob[]> {
    if (delivery.jobs !== undefined) {
      return delivery.jobs.map((columns) => toClaimedRow(deliveredRow(columns)))
    }
    const ids = (delivery.ids ?? []).filter(isJobId)
    if (ids.length === 0) return []
    // Unnamed: rare, and so planned for the table as it is (see findExpiredLeases).
    const rows = await this.query<JobRow>(this.texts['wait-for-jobs-delivered'], [ids])
    return rows.map(toClaimedRow)
  }

  /**
   * Puts back in line the jobs of a delivery whose waiter had stopped waiting, as a snooze to
   * their own run time: ready again in their place, the attempt not counted (settle.sql). The
   * settle's NOTIFY wakes the waiters of their queues, this process's too, and its commit takes
   * their registrations out (functions/wake.sql). Not woken here first: a
   * waiter woken before its registration is gone may be handed jobs it must give back in turn.
   */
  private giveBackDelivery(delivery: Delivery): void {
    const work = (async () => {
      const jobs = await this.deliveredJobs(delivery)
      if (jobs.length === 0) return
      await this.query(this.texts.settle, [...settlementArrays(jobs.map(giveBack)), null], 'settle')
    })().catch(() => {
      // Unreachable store: the leases run out and recoverExpired puts the jobs back.
    })
    this.givingBack.add(work)
    void work.finally(() => this.givingBack.delete(work))
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
    // A statement of its own before the recovery: it runs only at a worker's start and after a
    // backward step, and the leases it moves were not expired, so the recovery's answer is the same.
    if (clampLeases) {
      const [row] = await this.query<{ count: number }>(this.texts['clamp-leases'], [now ?? null])
      result.clamped = row!.count
    }
    const given = leases?.filter((lease) => isJobId(lease.id))
    if (given !== undefined && given.length === 0) return result
    const rows = await this.query<{ id: string; state: JobState }>(
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
    assertPositiveInteger(limit, 'limit')
    // Unnamed, so planned for the table as it is at each call (a sweep is rare): a named statement
    // keeps the plan it made when the table was small (functions/README.md).
    const rows = await this.query<{
      now: string
      next_expires_at: string | null
      id: string | null
      lease_token: string
      lease_expires_at: string
      lease_ms: string
    }>(this.texts['find-expired-leases'], [now ?? null, limit])
    const [first] = rows
    return {
      now: Number(first!.now),
      nextExpiresAt: first!.next_expires_at === null ? null : Number(first!.next_expires_at),
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
    const checked = checkListJobsParams(params, isJobId)
    if (checked.ids !== undefined) {
      if (checked.ids.length === 0) return { jobs: [], nextCursor: null }
      const rows = await this.query<JobRow>(this.texts['get-job'], [checked.ids])
      const byId = new Map(rows.map((row) => [row.id, row]))
      return {
        jobs: checked.ids.flatMap((id) => {
          const row = byId.get(id)
          return row === undefined ? [] : [toJob(row)]
        }),
        nextCursor: null,
      }
    }
    const { state, queue, limit, cursor } = checked
    const rows = await this.query<JobRow>(this.texts['list-jobs'], [
      state ?? null,
      queue ?? null,
      cursor ?? null,
      limit + 1,
    ])
    const more = rows.length > limit
    const page = more ? rows.slice(0, limit) : rows
    return { jobs: page.map(toJob), nextCursor: more ? page[page.length - 1]!.id : null }
  }

  async stats(params: StatsParams = {}): Promise<QueueStats[]> {
    this.assertOpen('stats')
    checkStatsParams(params)
    const { now, recentWindowMs = 60_000 } = params
    const rows = await this.query<{
      kind: 'count' | 'recent'
      queue: string
      state: JobState
      count: number
    }>(this.texts.stats, [now ?? null, Math.floor(recentWindowMs)])
    return foldStats(
      rows.map(({ kind, queue, state, count }) => ({
        queue,
        of: kind === 'count' ? state : state === 'completed' ? 'recentCompleted' : 'recentDead',
        count,
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
    const [row] = await this.query<{ count: number }>(this.texts.retry, [idList, queue ?? null, now ?? null])
    return row!.count
  }

  async cancel(params: CancelParams): Promise<number> {
    this.assertOpen('cancel')
    checkCancelParams(params)
    const { ids, now } = params
    const idList = ids.filter(isJobId)
    if (idList.length === 0) return 0
    const error: JobError = { kind: 'cancelled', message: 'cancelled by an operator' }
    const [row] = await this.query<{ count: number }>(this.texts.cancel, [
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
      const [row] = await this.query<{ count: number }>(this.texts.purge, [
        state,
        Math.floor(olderThanMs),
        queue ?? null,
        limit,
        at,
      ])
      return { deleted: row!.count }
    })
  }

  // ── worker control ─────────────────────────────────────────────────────────────────────────

  async control(params: ControlParams = {}): Promise<ControlRecord> {
    this.assertOpen('control')
    checkControlParams(params)
    const { requestStop = false, now } = params
    if (requestStop) {
      // Its answer is the record as it now stands: no second read.
      const [row] = await this.query<{ at: string }>(this.texts['request-stop'], [now ?? null])
      this.knownStopAt = Number(row!.at)
      this.hub.broadcast('notified')
      return { stopRequestedAt: this.knownStopAt }
    }
    const [row] = await this.query<{ at: string }>(this.texts['stop-requested-at'], [], 'stop-requested-at')
    this.knownStopAt = row === undefined ? null : Number(row.at)
    return { stopRequestedAt: this.knownStopAt }
  }

  // ── waking up ──────────────────────────────────────────────────────────────────────────────

  /**
   * Resolves once LISTEN is active on the listening connection (the schema's channel and this
   * store's delivery channel) and the connection holds its lock, opening it if needed.
   */
  private listen(): Promise<void> {
    if (this.closed) return Promise.reject(new StoreClosedError('waitForWork'))
    this.listening ??= this.openListener().catch((error: unknown) => {
      this.listening = null
      this.scheduleReconnect()
      throw error
    })
    return this.listening
  }

  private async openListener(): Promise<void> {
    const client = new pg.Client(this.config)
    let connected = false
    // A drop (server restart, pg_terminate_backend, network) ends the connection: open a new one.
    const onLost = (): void => {
      if (this.listener !== client) return
      this.listener = null
      this.listening = null
      this.lockKey = null
      client.removeAllListeners('notification')
      client.end().catch(() => {})
      this.scheduleReconnect()
    }
    client.on('error', onLost)
    client.on('end', onLost)
    client.on('notification', (message) => {
      if (message.channel === this.deliveryChannel) this.onDelivery(message.payload ?? '')
      else this.onNotification(message.payload ?? '*')
    })
    let lockKey: string
    try {
      await client.connect()
      connected = true
      if (this.closed) throw new StoreClosedError('waitForWork')
      // One round trip. The lock is the liveness of this store's waiters: the server releases it
      // when the connection ends, however it ends. A key of its own for each connection: taking
      // the previous one again could wait for the server to notice that connection is gone.
      for (let locked = false; !locked;) {
        lockKey = randomBytes(8).readBigInt64BE().toString()
        const results = (await client.query(
          `LISTEN ${quoteIdent(this.channel)}; LISTEN ${quoteIdent(this.deliveryChannel)}; ` +
            `SELECT pg_try_advisory_lock(${lockKey}) AS locked`,
        )) as unknown as pg.QueryResult<{ locked: boolean }>[]
        // False only when another session holds that very key: draw another.
        locked = results[results.length - 1]!.rows[0]!.locked
      }
      if (this.closed) throw new StoreClosedError('waitForWork')
    } catch (error) {
      client.removeAllListeners('notification')
      if (connected) await client.end().catch(() => {})
      throw wrapDriverError(error, describeDriverError(this.server))
    }
    this.listener = client
    this.lockKey = lockKey!
    this.reconnectAttempts = 0
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer !== null) return
    const attempt = this.reconnectAttempts++
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** attempt) * (0.5 + Math.random() / 2)
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null
      if (this.closed) return
      void this.listen().then(
        // Notifications sent while the connection was down are lost: every waiter looks again.
        () => this.hub.broadcast('notified'),
        () => {},
      )
    }, delay)
  }

  private onNotification(message: string): void {
    if (message === '*') {
      this.hub.broadcast('notified')
      return
    }
    const ready: string[] = []
    for (const item of message.split(',')) {
      const at = item.indexOf('@')
      if (at < 0) ready.push(item)
      else this.armDue(Number(item.slice(at + 1)))
    }
    this.hub.notify(ready)
  }

  /**
   * A delivery on this store's channel: to its waiter if it still waits. Else (its wait ended just
   * before, woken otherwise) to the same worker's next wait if that has begun, which would have
   * claimed exactly these; else back in line.
   */
  private onDelivery(message: string): void {
    let delivery: Delivery
    try {
      delivery = JSON.parse(message) as Delivery
    } catch {
      return
    }
    if (typeof delivery !== 'object' || delivery === null || typeof delivery.w !== 'string') return
    const waiter = this.deliveries.get(delivery.w) ?? this.nextWaitFor(delivery)
    if (waiter === undefined) {
      this.giveBackDelivery(delivery)
      return
    }
    // A waiter takes one delivery: a second one goes elsewhere.
    this.deliveries.delete(waiter.registration.id)
    waiter.take(delivery, waiter.registration.id !== delivery.w)
  }

  /**
   * A waiter of this store that these jobs, delivered to a wait that has ended, can go to as if
   * delivered to it: the same worker (id and lease), waiting on every queue of the jobs, for
   * their names, with room for all of them. A worker's queues do not change, so its claim would have taken these first.
   * Only a delivery that carries its rows: the others are rare, and would need reading first.
   */
  private nextWaitFor(delivery: Delivery): DeliveryWaiter | undefined {
    if (delivery.jobs === undefined || delivery.jobs.length === 0) return undefined
    const rows = delivery.jobs.map(deliveredRow)
    const { worker_id: workerId, lease_expires_at: expiresAt, updated_at: leasedAt } = rows[0]!
    // A delivery's lease is the waiter's, cut to DELIVERY_LEASE_MS.
    const leaseMs = Number(expiresAt) - Number(leasedAt)
    for (const waiter of this.deliveries.values()) {
      const { registration } = waiter
      if (
        registration.workerId === workerId &&
        Math.min(registration.leaseMs, DELIVERY_LEASE_MS) === leaseMs &&
        registration.limit >= rows.length &&
        rows.every(
          (row) =>
            registration.queues.includes(row.queue) &&
            (registration.names === undefined || registration.names.includes(row.name)),
        )
      ) {
        return waiter
      }
    }
    return undefined
  }

  /** Arms the hub's due timer at a run time of the server's clock. */
  private armDue(serverAt: number | null): void {
    if (serverAt === null || !Number.isFinite(serverAt)) return
    const now = Date.now()
    this.hub.armDue(serverAt + this.clockOffsetMs, now)
  }

  /**
   * Wakes the waiters of queues that have ready work, and arms the timer for their next due job.
   * With a registration, the same statement registers that waiter for delivery if it is not to wake
   * at once; says whether it did.
   */
  private async check(
    queues: readonly string[],
    names: readonly string[] | undefined,
    registration: Registration | null = null,
  ): Promise<boolean> {
    if (this.closed || queues.length === 0) return false
    const lockKey = this.lockKey
    const register =
      registration === null || lockKey === null
        ? [null, null, null, null, null, null]
        : [
            registration.id,
            registration.limit,
            registration.leaseMs,
            registration.workerId,
            this.deliveryChannel,
            lockKey,
          ]
    const [row] = await this.query<{
      ready: string[]
      next_run_at: string | null
      server_now: string
      stop_at: string | null
      registered: boolean
    }>(this.texts['wait-for-work'], [queues, ...register, names ?? null], 'wait-for-work')
    const receivedAt = Date.now()
    // The server read its clock between sending the query and receivedAt. Assume the latest moment,
    // so a due timer can only fire late (by at most the round trip), never before the job's runAt:
    // the midpoint woke a waiter 7 ms early on a loaded CI machine, only to find nothing due.
    this.clockOffsetMs = receivedAt - Number(row!.server_now)
    const stopAt = row!.stop_at === null ? null : Number(row!.stop_at)
    if (stopAt !== this.knownStopAt) {
      this.knownStopAt = stopAt
      this.hub.broadcast('notified')
    }
    this.hub.notify(row!.ready)
    this.armDue(row!.next_run_at === null ? null : Number(row!.next_run_at))
    return row!.registered
  }

  // ── internals ──────────────────────────────────────────────────────────────────────────────

  /**
   * Runs one statement on a pooled connection. `prepared` names it, so each connection parses and
   * plans it once (pg sends it unnamed otherwise, re-parsed every time).
   */
  private async query<R>(text: string, values: unknown[], prepared?: SqlName): Promise<R[]> {
    try {
      const result = await this.pool.query(
        prepared === undefined ? { text, values } : { name: `ferry-${prepared}`, text, values },
      )
      return result.rows as R[]
    } catch (error) {
      if (this.closed) throw new StoreClosedError('query')
      throw wrapDriverError(error, describeDriverError(this.server))
    }
  }

  private async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect()
    } catch (error) {
      throw wrapDriverError(error, describeDriverError(this.server))
    }
  }

  private async serverNow(): Promise<number> {
    const [row] = await this.query<{ now: string }>(`SELECT ${quoteIdent(this.schema)}.now_ms() AS now`, [])
    return Number(row!.now)
  }

  private async assertSchemaCurrent(): Promise<void> {
    await this.withClient((client) => this.schemaFiles.assertCurrent(client))
  }

  private async withClient<R>(use: (client: pg.PoolClient) => Promise<R>): Promise<R> {
    const client = await this.connect()
    try {
      return await use(client)
    } catch (error) {
      throw wrapDriverError(error, describeDriverError(this.server))
    } finally {
      client.release()
    }
  }

  private assertOpen(operation: string): void {
    assertOpen(this.closed, operation)
  }
}

/**
 * Parses `postgres://…` or `postgresql://…`. Ferry's own parameters are taken out of the query
 * string (`schema`, `poolSize`); every other part goes to the driver as it is.
 */
export function parsePostgresUrl(url: string): PostgresStoreOptions {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new ValidationError('invalid_option', 'store', `"${redact(url)}" is not a valid postgres:// URL`)
  }
  assertKnownKeys(
    Object.fromEntries(parsed.searchParams),
    [...POSTGRES_URL_PARAMS, ...DRIVER_URL_PARAMS],
    'store',
  )
  const options: PostgresStoreOptions = { connectionString: '' }
  const schema = parsed.searchParams.get('schema')
  if (schema !== null) options.schema = schema
  const poolSize = parsed.searchParams.get('poolSize')
  if (poolSize !== null) {
    options.poolSize = /^\d+$/.test(poolSize) ? Number(poolSize) : NaN
  }
  for (const name of POSTGRES_URL_PARAMS) parsed.searchParams.delete(name)
  options.connectionString = parsed.toString()
  return options
}

/**
 * Refuses a connection string's query parameter that the driver would drop, Ferry's own included
 * (`schema` is an option beside connectionString, not in it). A string that is no postgres:// URL
 * (a socket path) is left to the driver.
 */
function assertDriverParams(connectionString: string): void {
  let parsed: URL
  try {
    parsed = new URL(connectionString)
  } catch {
    return
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') return
  assertKnownKeys(Object.fromEntries(parsed.searchParams), DRIVER_URL_PARAMS, 'connectionString')
}

const TEXT_OID = 25

/**
 * A text[] parameter in PostgreSQL's binary array format (pg sends a Buffer as a binary
 * parameter). Each element is its UTF-8 bytes behind a length, so neither side escapes or scans
 * it: for 10,000 payloads of 520 B, pg's text array literal cost this process a median of 128 ms
 * of CPU time and the binary one 74 ms (5 runs of one batch each, load 8-9), and the server's
 * array_recv copies where array_in parses quotes and backslashes. Only the store's own
 * connections get it: a caller's `tx` may be a driver that sends a Buffer as bytea.
 */
function binaryTextArray(items: readonly (string | null)[]): Buffer {
  const lengths = new Array<number>(items.length)
  let size = 20
  let hasNull = 0
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!
    if (item === null) {
      lengths[i] = -1
      hasNull = 1
      size += 4
    } else {
      lengths[i] = Buffer.byteLength(item)
      size += 4 + lengths[i]!
    }
  }
  // Header: dimensions, has-null flag, element type, then length and lower bound of the one dimension.
  const buffer = Buffer.allocUnsafe(size)
  buffer.writeInt32BE(1, 0)
  buffer.writeInt32BE(hasNull, 4)
  buffer.writeInt32BE(TEXT_OID, 8)
  buffer.writeInt32BE(items.length, 12)
  buffer.writeInt32BE(1, 16)
  let offset = 20
  for (let i = 0; i < items.length; i++) {
    offset = buffer.writeInt32BE(lengths[i]!, offset)
    if (lengths[i]! > 0) offset += buffer.write(items[i]!, offset, 'utf8')
  }
  return buffer
}

/** Substitutes the schema into psql-style placeholders: :"schema" (identifier), :'schema' (literal). */
function redact(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@')
}

/** The queues whose jobs in this batch are ready at once (runAt in the past or no delay). */
function readyQueuesOf(jobs: readonly NewJob[], now: number | undefined): Set<string> {
  const at = now ?? Date.now()
  const queues = new Set<string>()
  for (const job of jobs) if (job.runAt === null ? job.delayMs <= 0 : job.runAt <= at) queues.add(job.queue)
  return queues
}

/** settle's array parameters, one element per settlement; they are checked (checkSettlements). */
function settlementArrays(
  settlements: readonly Settlement[],
): [(string | null)[], string[], string[], (number | null)[], (string | null)[], (string | null)[]] {
  const n = settlements.length
  const ids = new Array<string | null>(n)
  const tokens = new Array<string>(n)
  const kinds = new Array<string>(n)
  const runAts = new Array<number | null>(n)
  const errors = new Array<string | null>(n)
  const results = new Array<string | null>(n)
  for (let i = 0; i < n; i++) {
    const s = settlements[i]!
    // An id that cannot exist matches no row: its item reports 'lease_lost', like a stale one.
    ids[i] = isJobId(s.id) ? s.id : null
    tokens[i] = s.leaseToken
    kinds[i] = s.kind
    runAts[i] = null
    errors[i] = null
    results[i] = null
    switch (s.kind) {
      case 'completed':
        results[i] = s.result === undefined ? null : JSON.stringify(s.result)
        break
      case 'retry':
        runAts[i] = Math.floor(s.runAt)
        errors[i] = JSON.stringify(s.error)
        break
      case 'snoozed':
        runAts[i] = Math.floor(s.runAt)
        break
      case 'dead':
        errors[i] = JSON.stringify(s.error)
        break
    }
  }
  return [ids, tokens, kinds, runAts, errors, results]
}

/** Per-item results from settle's lost and locked positions (1-based); every other item is settled. */
function settleResults(
  count: number,
  { lost, locked }: { lost: readonly number[]; locked: readonly number[] },
): SettleResult[] {
  const index = (position: number): number => position - 1
  return foldResults(count, 'ok', [
    ['lease_lost', lost.map(index)],
    ['locked', locked.map(index)],
  ])
}

function toJob(row: JobRow): Job {
  return {
    id: row.id,
    queue: row.queue,
    name: row.name,
    payload: JSON.parse(row.payload) as unknown,
    state: row.state,
    priority: row.priority,
    runAt: Number(row.run_at),
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    timeoutMs: row.timeout_ms,
    uniqueKey: row.unique_key,
    lastError: row.last_error === null ? null : (JSON.parse(row.last_error) as JobError),
    result: row.result === null ? null : (JSON.parse(row.result) as unknown),
    workerId: row.worker_id,
    leaseExpiresAt: row.lease_expires_at === null ? null : Number(row.lease_expires_at),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
  }
}

/** The columns of a delivered job (functions/deliver.sql), in the table's order, as
 * the row pg would have returned: bigints as text. */
const DELIVERED_COLUMNS = [
  'id',
  'queue',
  'name',
  'payload',
  'state',
  'priority',
  'run_at',
  'attempts',
  'max_attempts',
  'timeout_ms',
  'unique_key',
  'lease_token',
  'lease_expires_at',
  'worker_id',
  'last_error',
  'result',
  'created_at',
  'updated_at',
  'finished_at',
] as const satisfies readonly (keyof JobRow)[]

function deliveredRow(columns: readonly unknown[]): JobRow {
  const row: Record<string, unknown> = {}
  DELIVERED_COLUMNS.forEach((name, i) => (row[name] = columns[i] ?? null))
  return row as unknown as JobRow
}

function toClaimedRow(row: JobRow): ClaimedJob {
  return toClaimedJob(toJob(row), row.lease_token!)
}

function isQueryable(tx: unknown): tx is PostgresQueryable {
  return typeof tx === 'object' && tx !== null && typeof (tx as PostgresQueryable).query === 'function'
}

/**
 * What a driver error says, for the StoreUnavailableError it becomes. A connection that failed or broke names the server
 * (`server`, host:port) and the operating system's error: pg's own message for a refused
 * connection to `localhost` is empty, and for a port where something else accepts and hangs up
 * it is only "Connection terminated unexpectedly".
 */
function describeDriverError(server: string): (error: unknown) => string | null {
  return (error) => {
    if (!(error instanceof Error)) return null
    const os = osErrorOf(error)
    if (os !== null) {
      return os.connecting
        ? `cannot connect to PostgreSQL at ${server}: ${os.text}`
        : `PostgreSQL at ${server}: the connection failed: ${os.text}`
    }
    if (error.message === 'Connection terminated unexpectedly') {
      return (
        `PostgreSQL at ${server} closed the connection (${error.message}): the server stopped or ` +
        'restarted, or what listens there is not PostgreSQL'
      )
    }
    const code = (error as { code?: unknown }).code
    return `PostgreSQL: ${typeof code === 'string' ? `${code}: ` : ''}${error.message}`
  }
}

/** host:port of a connection string, for messages: a `?host=` (a socket directory) wins, as in pg. */
function serverOf(connectionString: string): string {
  const address = serverAddress(connectionString, DEFAULT_PORT)
  try {
    const host = new URL(connectionString).searchParams.get('host')
    return host === null ? address : `${host}:${address.slice(address.lastIndexOf(':') + 1)}`
  } catch {
    return address
  }
}
