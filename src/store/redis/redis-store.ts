/**
 * The Redis (or Valkey) store. Every change that touches more than one key is one Lua script
 * (redis-scripts.ts); key names come from keys.ts only. Waiting workers
 * subscribe to one shard channel per namespace, and each store to one of its own for deliveries.
 *
 * Client: ioredis, chosen over node-redis 6.3.1 by measurement on this machine (2 cores, shared
 * Redis 7.0.15 on localhost, Node 20.20; three rounds, medians of each):
 * - EVALSHA round trip p50: ioredis 0.048–0.106 ms, node-redis 0.058–0.093 ms (a tie)
 * - pub/sub delivery p50: ioredis 0.060–0.085 ms, node-redis 0.068–0.096 ms (a tie)
 * - BZPOPMIN wake p50: ioredis 0.11–0.31 ms, node-redis 0.18–0.28 ms (a tie; both slower than pub/sub)
 * - 10,000 concurrent EVALSHA calls: ioredis 192–228 ms, node-redis 220–291 ms
 * - 10,000 pipelined EVALSHA: ioredis 128–193 ms, node-redis 54–121 ms (Ferry sends one script per
 *   batch instead, so this does not count)
 * - one EVALSHA carrying 10,000 jobs of 520 bytes (90,000 arguments): node-redis's evalSha threw
 *   "Maximum call stack size exceeded"; through its raw sendCommand 74–78 ms, ioredis 87–89 ms;
 *   with two arguments per job (the encoding used here) 48–60 ms and 50–66 ms.
 * ioredis re-subscribes by itself after a reconnect, takes argument arrays without spreading them,
 * and is the client DESIGN.md names; node-redis would need raw commands for batches.
 */
import type { Cluster, Redis } from 'ioredis'
import { randomBytes } from 'node:crypto'
import { MigrationRequiredError } from '../../core/errors.js'
import type { ClaimedJob, Job } from '../../core/job.js'
import type {
  CancelParams,
  ChangeJobResult,
  ChangeJobsParams,
  ChangeJobsResult,
  ClaimParams,
  ControlParams,
  ControlRecord,
  FindExpiredLeasesParams,
  FindExpiredLeasesResult,
  EnqueueParams,
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
  RecoverParams,
  RecoverResult,
  RemoveWorkerParams,
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
  checkHeartbeatParams,
  checkRemoveWorkerParams,
  checkThroughputParams,
  checkWorkersParams,
} from '../kernel/workers.js'
import { heartbeatArgs, throughputArgs, toThroughputCounts, toWorkerRecords } from './redis-workers.js'
import {
  checkClaimParams,
  checkCancelParams,
  checkListJobsParams,
  checkDeleteJobsParams,
  checkControlParams,
  checkPruneParams,
  checkPurgeParams,
  checkRetryParams,
  checkStatsParams,
  RECOVER_LIMIT_DEFAULT,
  transactionRefused,
} from '../params.js'
import { assertInteger } from '../../core/validate.js'
import { assertOpen } from '../kernel/assert-open.js'
import { cancelledError } from '../kernel/cancel.js'
import { checkChangeJobsParams } from '../kernel/change-jobs.js'
import { checkRenewReports, reportColumns } from '../kernel/job-reports.js'
import { compareIds } from '../kernel/job-ids.js'
import { purgeInChunks } from '../kernel/purge.js'
import { RETENTION_DEFAULTS } from '../kernel/retention.js'
import { preparedOrClosed, usedThenClosed } from '../kernel/lifecycle.js'
import { checkFireScheduleParams, checkSchedulesParams, toSchedule } from '../kernel/schedules.js'
import { foldStats } from '../kernel/stats.js'
import { redisKeys, type RedisKeys } from './keys.js'
import { RedisEvents } from './redis-events.js'
import { EVENT_CHANNEL, type EventSource } from '../events/job-event.js'
import {
  AT,
  claimArgs,
  controlArgs,
  enqueueArgs,
  integer,
  isJobId,
  JOB_FIELDS,
  type JobReply,
  mergeSettled,
  schedulesArgs,
  settleArgs,
  statsCounts,
  toClaimedReply,
  toControlRecord,
  toEnqueueResults,
  recoverArgs,
  changeJobsArgs,
  toJob,
  toScheduleRow,
} from './redis-encoding.js'
import {
  assertRedisOptionKeys,
  connectRedis,
  createRedisClient,
  type RedisStoreOptions,
} from './redis-options.js'
import { layoutVersions, RedisScripts, toStoreError } from './redis-scripts.js'
import { checkEvictionPolicy, checkPersistence, emitWarningOnce } from './redis-server-checks.js'
import { quit, RedisWaiting } from './redis-waiting.js'

export { parseRedisUrl, type RedisStoreOptions } from './redis-options.js'

/** Group commit (capabilities.enqueueBatch): jobs per enqueue script, and scripts sent at once. */
const ENQUEUE_CHUNK = 1000
const ENQUEUE_IN_FLIGHT = 16
/**
 * Group commit also cuts by size: at most ENQUEUE_CHUNK_BYTES per enqueue script; and one call
 * (one enqueueMany, which must stay atomic) is refused above ENQUEUE_CALL_MAX_BYTES.
 * The hard limit: ioredis writes a command as one JavaScript string (Command.toWritable), and V8
 * caps a string at 2^29 - 24 = 536,870,888 UTF-16 units. One enqueue of 511 payloads of 1 MiB went
 * through, 512 failed with "RangeError: Invalid string length", and so did 600 concurrent enqueues
 * of 1 MiB, which group commit had put in one script. The limit is half that ceiling.
 * The cut: 600 payloads of 1 MiB sent as enqueue calls of N MiB each, 16 in flight, on a
 * redis-server of its own with appendfsync always (two runs each, 2026-12-01; server time per
 * script from INFO commandstats, during which every other client waits): N = 1: 4.36-4.41 s in
 * all, 1.9 ms per script; 4: 4.01-4.13 s, 8.8-9.2 ms; 16: 6.8-7.7 s, 54-75 ms; 64: 8.3-8.4 s,
 * 245-290 ms; 256: 7.8-8.4 s, 0.63-1.09 s.
 */
const ENQUEUE_CHUNK_BYTES = 4 * 2 ** 20
const ENQUEUE_CALL_MAX_BYTES = 256 * 2 ** 20
/** Jobs listJobs looks at per call before it returns a short page with a cursor. */
const LIST_BUDGET = 10_000
const PURGE_CHUNK = 1000

/**
 * The Redis store. Times: a call's `now` when given, else the Redis server's clock (TIME, read
 * inside each script), so workers on many hosts share one clock whatever their own say.
 */
export class RedisStore implements Store, EventSource {
  readonly kind = 'redis'
  readonly capabilities: StoreCapabilities
  readonly keys: RedisKeys

  private readonly redis: Redis | Cluster
  /** host:port of the server (a cluster's first node), for the messages of connection errors. */
  private readonly server: string
  /** The latest error the client reported on its own ('error' events): why a connection failed. */
  private lastClientError: unknown = null
  private readonly allowEviction: boolean
  private readonly scripts: RedisScripts
  private readonly waiting: RedisWaiting
  /** The job event log (redis-events.ts), opened by the first publisher or subscriber. */
  private events: RedisEvents | null = null
  private closed = false

  static async open(options: RedisStoreOptions = {}): Promise<RedisStore> {
    return preparedOrClosed(new RedisStore(options), async (store) => {
      await store.connect()
      // Before anything is written: a server that may evict keys is refused unless allowed.
      const warn = options.onWarning ?? emitWarningOnce
      if (!store.allowEviction) await checkEvictionPolicy(store.redis, warn)
      await store.scripts.load()
      if (options.migrate ?? true) await store.migrate()
      else await store.assertLayoutCurrent()
      await store.control()
      await checkPersistence(store.redis, warn)
    })
  }

  /**
   * Connects without checking the key layout, records it and closes: what `ferry migrate` runs,
   * so that it can say what it applied (open() would have applied it). A server that may evict
   * keys is refused as open() refuses it.
   */
  static async applyMigrations(options: RedisStoreOptions = {}): Promise<MigrateResult> {
    return usedThenClosed(new RedisStore(options), async (store) => {
      await store.connect()
      if (!store.allowEviction) await checkEvictionPolicy(store.redis, options.onWarning ?? emitWarningOnce)
      return store.migrate()
    })
  }

  private constructor(options: RedisStoreOptions) {
    // Before connecting: a misspelt namespace must not write into the default one.
    assertRedisOptionKeys(options)
    this.keys = redisKeys(options.namespace)
    this.allowEviction = options.allowEviction ?? false
    this.capabilities = {
      crossProcessWake: 'pubsub',
      transactionalEnqueue: false,
      // Scripts sent on one connection run in the order sent, so ids still follow the enqueue
      // order; cut in ENQUEUE_CHUNK pieces, Redis runs one script while this process encodes the next.
      enqueueBatch: {
        maxItems: ENQUEUE_CHUNK,
        maxBytes: ENQUEUE_CHUNK_BYTES,
        maxCallBytes: ENQUEUE_CALL_MAX_BYTES,
        maxInFlight: ENQUEUE_IN_FLIGHT,
      },
      delivery: true,
      payloadSearch: false,
    }
    const { redis, server } = createRedisClient(options)
    this.redis = redis
    this.server = server
    this.scripts = new RedisScripts(redis, this.keys, this.allowEviction)
    this.waiting = new RedisWaiting(redis, this.keys, this.scripts)
    // Connection errors reach the callers as rejected calls; the client reconnects by itself.
    // The latest is kept: a failed connect() says only "Connection is closed.".
    this.redis.on('error', (error: unknown) => {
      this.lastClientError = error
    })
  }

  private connect(): Promise<void> {
    return connectRedis(this.redis, this.server, () => this.lastClientError)
  }

  // ── lifecycle ──────────────────────────────────────────────────────────────────────────────

  async migrate(): Promise<MigrateResult> {
    this.assertOpen('migrate')
    // At open, the namespace's marker becomes this store's (a new one if it has none: a fresh
    // namespace). Later calls check it, as every script does.
    const layouts = layoutVersions(this.keys)
    const [fromVersion, , instance] = (await this.scripts.run('migrate', undefined, [
      layouts.latest,
      randomBytes(16).toString('hex'),
    ])) as [number, number, string]
    this.scripts.instance = instance
    return layouts.result(fromVersion)
  }

  [EVENT_CHANNEL](): RedisEvents {
    this.events ??= new RedisEvents(this.redis, this.keys)
    return this.events
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    // The waiters' registrations go first, and jobs handed to them back in line, on this connection.
    await this.waiting.close()
    await this.events?.close()
    await quit(this.redis)
  }

  // ── producer ───────────────────────────────────────────────────────────────────────────────

  async enqueue({ jobs, tx, now }: EnqueueParams): Promise<EnqueueResult[]> {
    this.assertOpen('enqueue')
    if (tx !== undefined) throw transactionRefused(this.kind)
    if (jobs.length === 0) return []
    const args = enqueueArgs(jobs, ENQUEUE_CALL_MAX_BYTES)
    const reply = (await this.scripts.run('enqueue', now, args)) as [number, ...(string | number)[]]
    this.waiting.noteServerTime(reply[0], now)
    return toEnqueueResults(jobs.length, reply)
  }

  // ── worker hot path ────────────────────────────────────────────────────────────────────────

  async claim(params: ClaimParams): Promise<ClaimedJob[]> {
    this.assertOpen('claim')
    checkClaimParams(params)
    const reply = (await this.scripts.run('claim', params.now, claimArgs(params))) as [number, ...JobReply[]]
    this.waiting.noteServerTime(reply[0], params.now)
    return reply.slice(1).map((job) => toClaimedReply(job as JobReply))
  }

  async settle({ settlements, claim, now }: SettleParams): Promise<SettleBatchResult> {
    this.assertOpen('settle')
    if (claim === undefined) {
      if (settlements.length === 0) return { settled: [], claimed: [] }
      const { args, sent } = settleArgs(settlements)
      if (sent.length === 0) return { settled: settlements.map(() => 'lease_lost'), claimed: [] }
      const reply = (await this.scripts.run('settle', now, args)) as number[]
      return { settled: mergeSettled(sent, reply, settlements.length), claimed: [] }
    }
    checkClaimParams(claim)
    const { args, sent } = settleArgs(settlements)
    const reply = (await this.scripts.run('settle-with-claim', now, [...args, ...claimArgs(claim)])) as [
      number,
      number[],
      ...JobReply[],
    ]
    return {
      settled: mergeSettled(sent, reply[1], settlements.length),
      claimed: reply.slice(2).map((job) => toClaimedReply(job as JobReply)),
    }
  }

  /** renew.lua: per lease 1 (ok) or 0 (lost); with delivered, the take that is not persisted. */
  async renew({ leases, leaseMs, delivered = false, now }: RenewParams): Promise<SettleResult[]> {
    this.assertOpen('renew')
    assertInteger(leaseMs, 'leaseMs', { min: 1 })
    checkRenewReports(leases)
    if (leases.length === 0) return []
    const args: string[] = [String(leaseMs), delivered ? '1' : '0']
    const sent: number[] = []
    leases.forEach((lease, i) => {
      const { id, leaseToken } = lease
      if (!isJobId(id) || typeof leaseToken !== 'string') return
      const { progress, logs } = reportColumns(lease.report)
      args.push(id, leaseToken, progress ?? '', logs ?? '')
      sent.push(i)
    })
    if (sent.length === 0) return leases.map(() => 'lease_lost')
    const reply = (await this.scripts.run('renew', now, args)) as number[]
    return mergeSettled(sent, reply, leases.length)
  }

  /**
   * With `claim`, the waiter is registered (lua/wait-for-work.lua) so that an enqueue may hand it
   * jobs (lua/lib/deliver.lua) on this store's delivery channel.
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
    // A script of its own before the recovery: it runs only at a worker's start and after a
    // backward step, and the leases it moves were not expired, so the recovery's answer is the same.
    const clamped = clampLeases
      ? ((await this.scripts.run('recover-expired-clamp-leases', now, [])) as number)
      : 0
    // The start deadlines first, in the same script (lua/recover-expired.lua), as the SQLite store does.
    const args = recoverArgs(limit, expireJobs, leases)
    if (args === null) return { retried: [], dead: [], clamped, expired: [] }
    const [retried, dead, expired] = (await this.scripts.run('recover-expired', now, args)) as [
      string[],
      string[],
      string[],
    ]
    return {
      retried: retried.sort(compareIds),
      dead: dead.sort(compareIds),
      clamped,
      expired: expired.map(String).sort(compareIds),
    }
  }

  async findExpiredLeases({
    now,
    limit = RECOVER_LIMIT_DEFAULT,
  }: FindExpiredLeasesParams = {}): Promise<FindExpiredLeasesResult> {
    this.assertOpen('findExpiredLeases')
    assertInteger(limit, 'limit', { min: 1 })
    const [serverNow, leases, next, deadlinesPassed] = (await this.scripts.run('find-expired-leases', now, [
      limit,
    ])) as [number, [string, string, number, number][], string, number]
    this.waiting.noteServerTime(serverNow, now)
    return {
      now: serverNow,
      nextExpiresAt: next === '' ? null : Number(next),
      startDeadlinesPassed: deadlinesPassed === 1,
      leases: leases.map(([id, leaseToken, leaseExpiresAt, leaseMs]) => ({
        id: String(id),
        leaseToken,
        leaseExpiresAt: Number(leaseExpiresAt),
        leaseMs: Number(leaseMs),
      })),
    }
  }

  // ── admin ──────────────────────────────────────────────────────────────────────────────────

  async listJobs(params: ListJobsParams = {}): Promise<JobPage> {
    this.assertOpen('listJobs')
    const checked = checkListJobsParams(params, { kind: this.kind, isJobId, payloadSearch: false })
    if (checked.ids !== undefined) return { jobs: await this.jobsByIds(checked.ids), nextCursor: null }
    const { state, queue, name, uniqueKey, createdAfter, createdBefore, limit, cursor } = checked
    const [flats, resume] = (await this.scripts.run('list-jobs', undefined, [
      state ?? '',
      queue ?? '',
      cursor ?? '',
      limit,
      LIST_BUDGET,
      name ?? '',
      createdAfter ?? '',
      createdBefore ?? '',
      uniqueKey ?? '',
    ])) as [JobReply[], string]
    const jobs = flats.map(toJob)
    if (jobs.length > limit) {
      const page = jobs.slice(0, limit)
      return { jobs: page, nextCursor: page[page.length - 1]!.id }
    }
    return { jobs, nextCursor: resume === '' ? null : resume }
  }

  async stats(params: StatsParams = {}): Promise<QueueStats[]> {
    this.assertOpen('stats')
    checkStatsParams(params)
    const { now, recentWindowMs = 60_000 } = params
    const rows = (await this.scripts.run('stats', now, [recentWindowMs])) as (string | number)[]
    const counts = statsCounts(rows)
    return foldStats(counts, recentWindowMs)
  }

  async retry(params: RetryParams): Promise<number> {
    this.assertOpen('retry')
    checkRetryParams(params)
    const { ids, allDead = false, queue, now } = params
    const args = allDead ? ['all', queue ?? ''] : ['ids', ...(ids ?? []).filter(isJobId)]
    if (args.length === 1) return 0
    return (await this.scripts.run('retry', now, args)) as number
  }

  async cancel(params: CancelParams): Promise<number> {
    this.assertOpen('cancel')
    checkCancelParams(params)
    const { ids, now } = params
    const valid = ids.filter(isJobId)
    if (valid.length === 0) return 0
    const error = cancelledError()
    return (await this.scripts.run('cancel', now, [JSON.stringify(error), ...valid])) as number
  }

  async purge(params: PurgeParams): Promise<number> {
    this.assertOpen('purge')
    checkPurgeParams(params)
    const { state, olderThanMs = 0, queue, now } = params
    // One clock for every chunk: the first chunk's server time when no `now` is given.
    const finishedBefore = (now ?? (await this.serverTime())) - olderThanMs
    return purgeInChunks(PURGE_CHUNK, async (limit) => {
      const [deleted, looked] = (await this.scripts.run('purge', now, [
        state,
        finishedBefore,
        queue ?? '',
        limit,
      ])) as [number, number]
      return { deleted, looked }
    })
  }

  async deleteJobs(params: DeleteJobsParams): Promise<number> {
    this.assertOpen('deleteJobs')
    checkDeleteJobsParams(params)
    const ids = params.ids.filter(isJobId)
    let deleted = 0
    // In pieces, so that no script holds the server for long whatever the caller sends.
    for (let from = 0; from < ids.length; from += PURGE_CHUNK) {
      deleted += (await this.scripts.run(
        'delete-jobs',
        params.now,
        ids.slice(from, from + PURGE_CHUNK),
      )) as number
    }
    return deleted
  }

  /** lua/change-jobs.lua: every change in one script, each job's a lib/change-job.lua call. */
  async changeJobs(params: ChangeJobsParams): Promise<ChangeJobsResult> {
    this.assertOpen('changeJobs')
    const changes = checkChangeJobsParams(params, isJobId)
    const args = changeJobsArgs(changes)
    const replies =
      args.length === 0
        ? []
        : ((await this.scripts.run('change-jobs', params.now, args)) as ChangeJobResult[])
    // The script answered for the ids it was sent, in order; an id of no valid form names no job.
    let next = 0
    return { results: changes.map((change) => (change.id === null ? 'not_found' : replies[next++]!)) }
  }

  /**
   * lua/prune.lua: one batch in one script, the steps of kernel/retention.ts pruneBatch done where
   * the zsets are, so a batch is one round trip however many queues it walks.
   */
  async prune(params: PruneParams = {}): Promise<PruneResult> {
    this.assertOpen('prune')
    const { now, limit } = checkPruneParams(params)
    const [deleted, looked] = (await this.scripts.run('prune', now, [
      limit,
      RETENTION_DEFAULTS.completedMs,
      RETENTION_DEFAULTS.deadMs,
    ])) as [number, number]
    return { deleted, more: looked >= limit }
  }

  // ── schedules ──────────────────────────────────────────────────────────────────────────────

  /** lua/schedules.lua: the changes and the read in one script, which wakes every waiter on a change. */
  async schedules(params: SchedulesParams = {}): Promise<SchedulesResult> {
    this.assertOpen('schedules')
    checkSchedulesParams(params)
    const [version, ...rows] = (await this.scripts.run('schedules', params.now, schedulesArgs(params))) as [
      number,
      ...string[][],
    ]
    return { schedules: rows.map((row) => toSchedule(toScheduleRow(row)!)), version }
  }

  /** lua/fire-schedule.lua: the check of the schedule as read, its last slot and the enqueue in one script. */
  async fireSchedule(params: FireScheduleParams): Promise<FireScheduleResult> {
    this.assertOpen('fireSchedule')
    checkFireScheduleParams(params)
    const { id, version, lastSlot, toSlot, jobs, now } = params
    const args = [id, integer(version), integer(lastSlot), integer(toSlot)].concat(
      enqueueArgs(jobs, ENQUEUE_CALL_MAX_BYTES),
    )
    const [outcome, detail] = (await this.scripts.run('fire-schedule', now, args)) as
      ['fired', [number, ...(string | number)[]]?] | ['overlap'] | ['stale', string[]]
    if (outcome === 'stale') {
      const row = toScheduleRow(detail)
      return { outcome, schedule: row === null ? null : toSchedule(row) }
    }
    if (outcome === 'overlap') return { outcome }
    if (detail === undefined) return { outcome, ids: [] }
    this.waiting.noteServerTime(detail[0], now)
    return { outcome, ids: toEnqueueResults(jobs.length, detail).map((result) => result.id) }
  }

  // ── worker control ─────────────────────────────────────────────────────────────────────────

  async control(params: ControlParams = {}): Promise<ControlRecord> {
    this.assertOpen('control')
    checkControlParams(params)
    // lua/control.lua applies the change and answers with the record as it now stands: one call.
    const reply = (await this.scripts.run('control', params.now, controlArgs(params))) as [
      string | null,
      (string | null)[],
      string | null,
    ]
    // What a worker reads after a wake-up: the stop request and schedules version its waiters know
    // of from now on. A request made here is left to its own wake-up ('x'), as every other process
    // sees it.
    const record = toControlRecord(reply)
    this.waiting.controlRead(reply[0], record.schedulesVersion, { stop: params.requestStop !== true })
    return record
  }

  // ── worker registry and throughput ─────────────────────────────────────────────────────────

  /** lua/heartbeat.lua: the record, the counts and a share of the cleaning in one script. */
  async heartbeat(params: HeartbeatParams): Promise<void> {
    this.assertOpen('heartbeat')
    const counts = checkHeartbeatParams(params)
    await this.scripts.run('heartbeat', params.now, heartbeatArgs(params, counts))
  }

  async removeWorker(params: RemoveWorkerParams): Promise<void> {
    this.assertOpen('removeWorker')
    checkRemoveWorkerParams(params)
    await this.scripts.run('remove-worker', undefined, [params.workerId])
  }

  async workers(params: WorkersParams = {}): Promise<WorkerRecord[]> {
    this.assertOpen('workers')
    checkWorkersParams(params)
    return toWorkerRecords((await this.scripts.run('workers', params.now, [])) as string[])
  }

  async throughput(params: ThroughputParams): Promise<ThroughputCount[]> {
    this.assertOpen('throughput')
    checkThroughputParams(params)
    const reply = (await this.scripts.run('throughput', params.now, throughputArgs(params))) as (
      string | string[]
    )[]
    return toThroughputCounts(reply, params.queue)
  }

  /** The jobs of these ids that exist, in the order asked: one HMGET each, pipelined. */
  private async jobsByIds(ids: readonly string[]): Promise<Job[]> {
    let replies: JobReply[]
    try {
      replies = await Promise.all(
        ids.map(async (id) => [
          id,
          ...((await this.redis.call('HMGET', this.keys.job(id), ...JOB_FIELDS)) as JobReply),
        ]),
      )
    } catch (error) {
      throw toStoreError(error, 'listJobs', this.keys)
    }
    // Every job has a queue: none means no job.
    return replies.flatMap((reply) => (reply[AT.q!] === null ? [] : [toJob(reply)]))
  }

  // ── internals ──────────────────────────────────────────────────────────────────────────────

  private async serverTime(): Promise<number> {
    try {
      const [seconds, micros] = (await this.redis.time()) as unknown as [string, string]
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
    } catch (error) {
      throw toStoreError(error, 'time', this.keys)
    }
  }

  private async assertLayoutCurrent(): Promise<void> {
    let version: number
    let instance: string | null
    try {
      // One slot (one hash tag): MGET is fine on a cluster too.
      const [schema, marker] = await this.redis.mget(this.keys.schema, this.keys.instance)
      version = Number(schema ?? 0)
      instance = marker ?? null
    } catch (error) {
      throw toStoreError(error, 'open', this.keys)
    }
    layoutVersions(this.keys).assertCurrent(version)
    if (instance === null) {
      throw new MigrationRequiredError(
        `Redis namespace ${this.keys.namespace} has no instance marker (${this.keys.instance}; its keys were deleted or evicted): run ferry migrate`,
      )
    }
    this.scripts.instance = instance
  }

  private assertOpen(operation: string): void {
    assertOpen(this.closed, operation)
  }
}
