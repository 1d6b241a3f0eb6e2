/**
 * The Redis (or Valkey) store. Every change that touches more than one key is one Lua script
 * (lua/*.lua, embedded at build time into generated/assets.ts), loaded into the server's cache at
 * open, run with EVALSHA, and sent again with EVAL when the server answers NOSCRIPT (after a
 * restart, a failover or SCRIPT FLUSH). Key names come from keys.ts only. Waiting workers
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
import { Cluster, Redis, type RedisOptions } from 'ioredis'
import { createHash, randomBytes } from 'node:crypto'
import {
  type FerryError,
  isStoreLost,
  MigrationRequiredError,
  StoreUnavailableError,
  ValidationError,
} from '../../core/errors.js'
import { type ClaimedJob, type Job, type JobError, type JobId } from '../../core/job.js'
import { giveBack, type Settlement } from '../../core/outcome.js'
import { assertKnownKeys, assertName, assertQueueList, optionKeys } from '../../core/validate.js'
import type {
  CancelParams,
  ClaimParams,
  ControlParams,
  ControlRecord,
  FindExpiredLeasesParams,
  FindExpiredLeasesResult,
  EnqueueParams,
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
  WaitClaim,
  WaitParams,
  WaitResult,
  WakeReason,
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
  messageOf,
  RECOVER_LIMIT_DEFAULT,
  transactionRefused,
} from '../params.js'
import { assertOpen } from '../kernel/assert-open.js'
import { wrapDriverError } from '../kernel/driver-errors.js'
import { compareIds, jobIdCheck } from '../kernel/job-ids.js'
import { toClaimedJob } from '../kernel/jobs.js'
import { newLeaseTokenBase } from '../kernel/lease-tokens.js'
import { purgeInChunks } from '../kernel/purge.js'
import { checkSettlements, foldResults } from '../kernel/settlements.js'
import { foldStats, type StatsCount } from '../kernel/stats.js'
import { osErrorOf, serverAddress } from '../connection-error.js'
import { WakeHub } from '../wake-hub.js'
import { numberedSteps, type SchemaStep, SchemaVersions } from '../kernel/migrations.js'
import { jobFields, scripts } from './generated/assets.js'
import { redisKeys, type RedisKeys } from './keys.js'

export interface RedisStoreOptions {
  /** `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS). Default redis://127.0.0.1:6379. */
  url?: string
  /** More ioredis options (TLS, sentinels, timeouts); Ferry sets its own retry and resend policy. */
  connection?: RedisOptions
  /**
   * The server is a Redis Cluster and `url` names one of its nodes (`?cluster=true` in a store
   * URL): the client finds the others and follows the slots as they move. Every key of a namespace
   * shares one hash tag, so each script runs whole on the node that holds that slot.
   */
  cluster?: boolean
  /** Keeps this Ferry's keys apart from others' on the same server: `ferry:{namespace}:…`. Default 'default'. */
  namespace?: string
  /** Record the key layout's version on open (default). When false, an unversioned namespace is an error. */
  migrate?: boolean
  /**
   * Open even when the server may evict keys (a `maxmemory-policy` other than `noeviction`;
   * `?allowEviction=true` in a store URL). Without it, such a server is refused at open: when
   * Redis is full it deletes keys, and so jobs. With it, the scripts clean up after what was
   * evicted (an index entry whose job is gone) instead of failing, but evicted jobs are lost.
   */
  allowEviction?: boolean
  /**
   * Called at open when the server's persistence cannot keep an acknowledged enqueue through a
   * crash (docs/backends.md). Default: process.emitWarning, once per process for each warning.
   * Pass `() => {}` to silence it.
   */
  onWarning?: (message: string) => void
}

const REDIS_OPTION_KEYS = optionKeys<RedisStoreOptions>({
  url: true,
  connection: true,
  cluster: true,
  namespace: true,
  migrate: true,
  allowEviction: true,
  onWarning: true,
})

/** The options a redis:// URL may set for Ferry, by their names in RedisStoreOptions. */
const REDIS_URL_PARAMS = [
  'namespace',
  'cluster',
  'allowEviction',
] as const satisfies readonly (keyof RedisStoreOptions)[]

/**
 * The query parameters of a redis:// URL that ioredis 6 takes as connection options and that keep
 * their meaning as text. ioredis makes an option of any parameter, which a typo then is in silence;
 * these are the ones a URL needs. A Cluster client reads no parameter of its seed URL at all.
 */
const DRIVER_URL_PARAMS = ['db', 'family', 'username', 'password', 'connectionName'] as const

type ScriptName = keyof typeof scripts

interface Script {
  name: ScriptName
  source: string
  sha: string
}

/** Every script, as its lua/*.lua file composes it from its includes (scripts/embed-assets.mjs). */
const SCRIPTS = Object.fromEntries(
  Object.entries(scripts).map(([name, source]) => [
    name,
    { name, source, sha: createHash('sha1').update(source).digest('hex') },
  ]),
) as Record<ScriptName, Script>

/**
 * The key layouts lua/migrate.lua knows, in order: the namespace's version is how many it has
 * (`ferry migrate` lists those it applied by these names).
 */
export const KEY_LAYOUTS: readonly string[] = [
  '0001_key-layout',
  '0002_instance-marker',
  '0003_ready-by-name',
]
const LAYOUT_STEPS = numberedSteps(KEY_LAYOUTS)

/** The key layouts as a namespace's migrations, and the errors that name it. */
function layoutVersions(keys: RedisKeys): SchemaVersions<SchemaStep> {
  return new SchemaVersions(LAYOUT_STEPS, {
    subject: `Redis namespace ${keys.namespace}`,
    versionNoun: 'key layout version',
  })
}
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
/** What each of the counts after a queue's name in lua/stats.lua's reply is of, in order. */
const STATS_ROW = [
  'ready',
  'scheduled',
  'active',
  'completed',
  'dead',
  'recentCompleted',
  'recentDead',
] as const satisfies readonly StatsCount['of'][]
const PURGE_CHUNK = 1000
/** Ids are drawn by INCRBY and travel through Lua's doubles: at most 16 digits stay exact. */
const isJobId = jobIdCheck(16)
const DEFAULT_URL = 'redis://127.0.0.1:6379'
const DEFAULT_PORT = 6379

/** The warnings process.emitWarning has been given: each is emitted once per process, not per store. */
const emittedWarnings = new Set<string>()

function emitWarningOnce(message: string): void {
  if (emittedWarnings.has(message)) return
  emittedWarnings.add(message)
  process.emitWarning(message, { code: 'FERRY_REDIS_PERSISTENCE' })
}

/** Script return codes and Redis errors become Ferry errors here, and only here. */
function toStoreError(error: unknown, operation: string, keys: RedisKeys): unknown {
  return wrapDriverError(error, (error) => describeError(error, operation, keys))
}

function describeError(error: unknown, operation: string, keys: RedisKeys): string | FerryError {
  const message = messageOf(error)
  const coded = /FERRY (\w+) ?(.*)/.exec(message)
  if (coded?.[1] === 'schema_too_new') return layoutVersions(keys).tooNew(Number(coded[2]))
  if (coded?.[1] === 'namespace_lost') {
    // lua/lib/prelude.lua: the namespace's instance marker is not the one this store opened.
    const what =
      coded[2] === 'replaced'
        ? `its instance marker (${keys.instance}) is not the one this store opened: the server was emptied and another process has started a fresh namespace there since`
        : `its instance marker (${keys.instance}) is missing: the server was emptied (FLUSHALL or FLUSHDB, a restart or failover without persistence) or the namespace's keys were deleted`
    return new StoreUnavailableError(
      `Redis (${operation}): namespace '${keys.namespace}' is gone from under this store: ${what}. The jobs it held are lost; Ferry does not recreate the namespace under running workers. Restart the workers and producers: a new process opens a fresh namespace`,
      { cause: error, retryable: false },
    )
  }
  return `Redis (${operation}): ${message}`
}

/**
 * The Redis store. Times: a call's `now` when given, else the Redis server's clock (TIME, read
 * inside each script), so workers on many hosts share one clock whatever their own say.
 */
export class RedisStore implements Store {
  readonly kind = 'redis'
  readonly capabilities: StoreCapabilities
  readonly keys: RedisKeys

  private readonly redis: Redis | Cluster
  /** host:port of the server (a cluster's first node), for the messages of connection errors. */
  private readonly server: string
  /** The latest error the client reported on its own ('error' events): why a connection failed. */
  private lastClientError: unknown = null
  private readonly prefixArgs: readonly string[]
  // The safety net covers a message lost with a subscriber connection that went away unnoticed
  // (a cluster node's, a network that dropped it silently).
  private readonly hub = new WakeHub({
    safetyNet: () =>
      // Every name: one look for all the waiters of this store, whatever their names.
      this.checkQueues([...this.watched.keys()]).catch((error: unknown) => {
        // The namespace is gone: the waiting workers' next call reports it, and they stop.
        if (isStoreLost(error)) this.hub.broadcast('notified')
      }),
  })
  /** Queues some waiter watches, with how many waiters watch each. */
  private readonly watched = new Map<string, number>()
  private subscriber: Redis | Cluster | null = null
  private subscribed: Promise<void> | null = null
  /** The stop request waiters last knew of (the stop key's text, null for none), read at open: a
   * different one wakes every waiter, even when its message was published before this store
   * subscribed. Read at the first subscription instead, a stop requested between a worker's first
   * wait and that read was taken as old, and the worker slept through it. */
  private stopSeen: string | null = null
  /**
   * The namespace's instance marker, read at open (lua/migrate.lua) and passed to every script,
   * which refuses to run on a namespace with another or none (lua/lib/prelude.lua). '' until then.
   */
  private instance = ''
  private readonly allowEviction: boolean
  /** The server's clock minus ours, from the last script that read TIME. */
  private clockOffsetMs = 0
  private closed = false
  /** Where enqueues hand this store's waiters their jobs (lua/lib/deliver.lua). */
  private readonly deliveryChannel: string
  /** This store's waiters that may be handed jobs, by waiter id. */
  private readonly deliveries = new Map<string, (jobs: Promise<ClaimedJob[]>) => void>()
  private waiterCount = 0

  static async open(options: RedisStoreOptions = {}): Promise<RedisStore> {
    const store = new RedisStore(options)
    try {
      await store.connect()
      // Before anything is written: a server that may evict keys is refused unless allowed.
      const warn = options.onWarning ?? emitWarningOnce
      await store.checkEvictionPolicy(warn)
      await store.loadScripts()
      if (options.migrate ?? true) await store.migrate()
      else await store.assertLayoutCurrent()
      await store.control()
      await store.checkPersistence(warn)
    } catch (error) {
      await store.close()
      throw error
    }
    return store
  }

  /**
   * Connects without checking the key layout, records it and closes: what `ferry migrate` runs,
   * so that it can say what it applied (open() would have applied it). A server that may evict
   * keys is refused as open() refuses it.
   */
  static async applyMigrations(options: RedisStoreOptions = {}): Promise<MigrateResult> {
    const store = new RedisStore(options)
    try {
      await store.connect()
      await store.checkEvictionPolicy(options.onWarning ?? emitWarningOnce)
      return await store.migrate()
    } finally {
      await store.close()
    }
  }

  private constructor(options: RedisStoreOptions) {
    // Before connecting: a misspelt namespace must not write into the default one.
    assertKnownKeys(options, REDIS_OPTION_KEYS, '')
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
    }
    this.deliveryChannel = this.keys.deliveryChannel(randomBytes(8).toString('hex'))
    this.prefixArgs = [...this.keys.scriptKeys, ...this.keys.scriptPrefixes]
    const url = options.url ?? DEFAULT_URL
    if (!/^rediss?:\/\//i.test(url)) {
      throw new ValidationError('invalid_option', 'url', `must start with redis:// or rediss:// (got ${url})`)
    }
    // Ferry's own parameters belong beside the URL here (openStore takes them out of its URL).
    assertKnownKeys(urlParams(url), options.cluster === true ? [] : DRIVER_URL_PARAMS, 'url')
    const connection: RedisOptions = {
      ...options.connection,
      maxRetriesPerRequest: 3,
      // A command in flight when the connection dropped may have run: never send it twice (an
      // enqueue would be doubled). Its caller gets an error and decides.
      autoResendUnfulfilledCommands: false,
      // How long disconnect() waits for a socket to close before destroying it: the timer stays
      // even when the server is already gone, and kept a closed store's process alive for 2 s.
      disconnectTimeout: 100,
    }
    // Reconnect for ever, at most a second apart; a call made meanwhile waits in the offline
    // queue, and fails after a few reconnection attempts so the worker's backoff takes over.
    const retry = (times: number): number => Math.min(times * 50, 1000)
    this.redis = options.cluster
      ? new Cluster([clusterSeed(url)], {
          lazyConnect: true,
          clusterRetryStrategy: retry,
          redisOptions: { ...connection, ...clusterCredentials(url) },
        })
      : new Redis(url, { ...connection, lazyConnect: true, retryStrategy: retry })
    this.server = serverAddress(url, DEFAULT_PORT)
    // Connection errors reach the callers as rejected calls; the client reconnects by itself.
    // The latest is kept: a failed connect() says only "Connection is closed.".
    this.redis.on('error', (error: unknown) => {
      this.lastClientError = error
    })
  }

  private async connect(): Promise<void> {
    try {
      await this.redis.connect()
    } catch (error) {
      const reason = this.lastClientError ?? error
      const message = messageOf(reason)
      const why =
        osErrorOf(reason)?.text ??
        (message === 'Connection is closed.'
          ? 'the connection was closed before the server answered: is a Redis server listening there?'
          : message)
      throw new StoreUnavailableError(`cannot connect to Redis at ${this.server}: ${why}`, { cause: reason })
    }
  }

  /**
   * Puts every script in the server's cache, so that calls run by SHA from the first one. Else the
   * first burst after a start went twice: calls pipelined before the first NOSCRIPT came back all
   * failed, and were sent again whole, with the script's source (run()). A cache is per node: on a
   * cluster, every master's is filled; a node that lacks a script later (a restart, a failover)
   * gets it from run(). Where SCRIPT is not allowed (an ACL), run() does the same.
   */
  private async loadScripts(): Promise<void> {
    const nodes = this.redis instanceof Cluster ? this.redis.nodes('master') : [this.redis]
    const sources = Object.values(SCRIPTS).map((script) => script.source)
    await Promise.all(
      nodes.flatMap((node) => sources.map((source) => node.call('SCRIPT', 'LOAD', source))),
    ).catch(() => {})
  }

  // ── lifecycle ──────────────────────────────────────────────────────────────────────────────

  async migrate(): Promise<MigrateResult> {
    this.assertOpen('migrate')
    // At open, the namespace's marker becomes this store's (a new one if it has none: a fresh
    // namespace). Later calls check it, as every script does.
    const layouts = layoutVersions(this.keys)
    const [fromVersion, , instance] = (await this.run('migrate', undefined, [
      layouts.latest,
      randomBytes(16).toString('hex'),
    ])) as [number, number, string]
    this.instance = instance
    return layouts.result(fromVersion)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    // Its waiters' registrations go first. Else an enqueue may hand jobs to one of them before
    // the subscriber's connection is seen gone: on a cluster, quit() returns before that.
    const waiters = [...this.deliveries.keys()]
    this.hub.broadcast('aborted')
    if (waiters.length > 0) await this.run('unwait', undefined, waiters).catch(() => {})
    await Promise.allSettled([quit(this.redis), this.subscriber === null ? null : quit(this.subscriber)])
  }

  // ── producer ───────────────────────────────────────────────────────────────────────────────

  async enqueue({ jobs, tx, now }: EnqueueParams): Promise<EnqueueResult[]> {
    this.assertOpen('enqueue')
    if (tx !== undefined) throw transactionRefused(this.kind)
    if (jobs.length === 0) return []
    const args: string[] = new Array(jobs.length * 2)
    // The command's length in UTF-16 units (never more than its UTF-8 bytes, which the Client
    // checks against maxCallBytes): a call past V8's string ceiling would fail inside ioredis.
    let length = 0
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i]!
      // Names reach key names and the comma-separated meta: only the validated alphabet may.
      assertName(job.queue, `jobs[${i}].queue`)
      assertName(job.name, `jobs[${i}].name`)
      args[2 * i] =
        `${job.queue},${job.name},${integer(job.priority)},${job.runAt === null ? '' : integer(job.runAt)},` +
        `${integer(job.delayMs)},${integer(job.maxAttempts)},${job.timeoutMs === null ? '' : integer(job.timeoutMs)},` +
        (job.uniqueKey ?? '')
      args[2 * i + 1] = job.payload
      length += args[2 * i]!.length + job.payload.length
    }
    if (length > ENQUEUE_CALL_MAX_BYTES) {
      throw new ValidationError(
        'payload_too_large',
        'jobs',
        `${jobs.length} jobs of ${length} characters in all are more than one enqueue to Redis can carry (${ENQUEUE_CALL_MAX_BYTES} bytes): enqueue them in smaller batches`,
      )
    }
    const [serverNow, firstId, ...notCreated] = (await this.run('enqueue', now, args)) as [
      number,
      number,
      ...(string | number)[],
    ]
    this.noteServerTime(serverNow, now)
    // One INCRBY drew an id per job, from firstId up (lua/enqueue.lua).
    const results: EnqueueResult[] = new Array(jobs.length)
    for (let i = 0; i < jobs.length; i++) results[i] = { id: String(firstId + i), created: true }
    for (let k = 0; k < notCreated.length; k += 2) {
      results[Number(notCreated[k]) - 1] = { id: String(notCreated[k + 1]), created: false }
    }
    return results
  }

  // ── worker hot path ────────────────────────────────────────────────────────────────────────

  async claim(params: ClaimParams): Promise<ClaimedJob[]> {
    this.assertOpen('claim')
    checkClaimParams(params)
    const reply = (await this.run('claim', params.now, claimArgs(params))) as [number, ...JobReply[]]
    this.noteServerTime(reply[0], params.now)
    return reply.slice(1).map((job) => toClaimedReply(job as JobReply))
  }

  async settle({ settlements, claim, now }: SettleParams): Promise<SettleBatchResult> {
    this.assertOpen('settle')
    if (claim === undefined) {
      if (settlements.length === 0) return { settled: [], claimed: [] }
      const { args, sent } = settleArgs(settlements)
      if (sent.length === 0) return { settled: settlements.map(() => 'lease_lost'), claimed: [] }
      const reply = (await this.run('settle', now, args)) as number[]
      return { settled: mergeSettled(sent, reply, settlements.length), claimed: [] }
    }
    checkClaimParams(claim)
    const { args, sent } = settleArgs(settlements)
    const reply = (await this.run('settle-and-claim', now, [...args, ...claimArgs(claim)])) as [
      number,
      number[],
      ...JobReply[],
    ]
    return {
      settled: mergeSettled(sent, reply[1], settlements.length),
      claimed: reply.slice(2).map((job) => toClaimedReply(job as JobReply)),
    }
  }

  async renew({ leases, leaseMs, delivered = false, now }: RenewParams): Promise<SettleResult[]> {
    this.assertOpen('renew')
    return this.leaseCall(delivered ? 'take-delivered' : 'renew', leases, leaseMs, now)
  }

  /** renew.lua and take-delivered.lua: the same arguments, and per lease 1 (ok) or 0 (lost). */
  private async leaseCall(
    script: 'renew' | 'take-delivered',
    leases: readonly { id: JobId; leaseToken: string }[],
    leaseMs: number,
    now: number | undefined,
  ): Promise<SettleResult[]> {
    assertPositiveInteger(leaseMs, 'leaseMs')
    if (leases.length === 0) return []
    const args: string[] = [String(leaseMs)]
    const sent: number[] = []
    leases.forEach(({ id, leaseToken }, i) => {
      if (!isJobId(id) || typeof leaseToken !== 'string') return
      args.push(id, leaseToken)
      sent.push(i)
    })
    if (sent.length === 0) return leases.map(() => 'lease_lost')
    const reply = (await this.run(script, now, args)) as number[]
    return mergeSettled(sent, reply, leases.length)
  }

  /**
   * With `claim`, the waiter is registered (lua/wait-check.lua) so that an enqueue may hand it
   * jobs (lua/lib/deliver.lua) on this store's delivery channel.
   */
  async waitForWork(params: WaitParams): Promise<WaitResult> {
    this.assertOpen('waitForWork')
    if (params.claim !== undefined) {
      const { limit, leaseMs, workerId } = params.claim
      checkClaimParams({ queues: params.queues, names: params.names, limit, leaseMs, workerId })
    }
    return this.wait(params, params.claim ?? null)
  }

  private wait(params: WaitParams, claim: WaitClaim | null): Promise<WaitResult> {
    assertQueueList(params.queues)
    checkNames(params.names)
    if (params.signal?.aborted) return Promise.resolve({ reason: 'aborted', jobs: [] })
    // This waiter alone is ended when its set-up fails or it is handed jobs; the caller's signal
    // ends it too, through a listener (AbortSignal.any cost 60 µs a wait against 31 µs, hot).
    const ended = new AbortController()
    const onAbort = (): void => ended.abort()
    params.signal?.addEventListener('abort', onAbort, { once: true })
    for (const queue of params.queues) this.watched.set(queue, (this.watched.get(queue) ?? 0) + 1)
    const waiterId = claim === null ? '' : `${this.deliveryChannel}:${++this.waiterCount}`
    // Handed jobs, the wait resolves as soon as they are here (at once, unless they were too
    // large to send and are being read): the first thing a waiting worker does is start them.
    const handing = { started: false }
    const delivered =
      claim === null
        ? null
        : new Promise<WaitResult>((resolve) =>
            this.deliveries.set(waiterId, (jobs) => {
              handing.started = true
              // The jobs start first: ending the wait (the hub's waiter, the signal's listeners)
              // took 0.13 ms p50 between the message and the handler (redis-wake, traced), so it
              // waits for the next turn of the event loop.
              setImmediate(() => ended.abort())
              jobs.then(
                (list) => resolve({ reason: 'delivered', jobs: list }),
                // Unreadable: the leases run out and recoverExpired puts the jobs back.
                () => resolve({ reason: 'notified', jobs: [] }),
              )
            }),
          )
    const woken = this.hub.wait({ ...params, signal: ended.signal }).finally(() => {
      params.signal?.removeEventListener('abort', onAbort)
      for (const queue of params.queues) {
        const count = this.watched.get(queue)! - 1
        if (count === 0) this.watched.delete(queue)
        else this.watched.set(queue, count)
      }
      if (claim !== null && this.deliveries.delete(waiterId) && !this.closed) {
        // Ended otherwise: no more deliveries to it. One already on its way is given back (onDelivery).
        this.run('unwait', undefined, [waiterId]).catch(() => {})
      }
    })
    const waited = this.register(params.queues, params.names, claim, waiterId, woken, ended)
    if (delivered === null) return waited
    // Once a delivery has begun, it decides how the wait ends.
    return Promise.race([delivered, waited.then((result) => (handing.started ? delivered : result))])
  }

  /**
   * Subscribes, then looks at the queues once and registers the waiter for deliveries (one
   * script): whatever is published from now on wakes it, and what came before (between the
   * worker's empty claim and now, or before the subscription) is found here.
   */
  private async register(
    queues: readonly string[],
    names: readonly string[] | undefined,
    claim: WaitClaim | null,
    waiterId: string,
    woken: Promise<WakeReason>,
    ended: AbortController,
  ): Promise<WaitResult> {
    try {
      await this.subscribe()
      const registration =
        claim === null
          ? ''
          : JSON.stringify({
              c: this.deliveryChannel,
              l: claim.limit,
              m: claim.leaseMs,
              w: claim.workerId,
              t: newLeaseTokenBase(),
              q: queues,
              n: names,
            })
      // A wait that ended while subscribing (a short timeout, an abort) already sent its unwait:
      // registered now, it would stay registered. One that ends from here on sends its unwait on
      // this connection after this check, so Redis runs them in that order.
      if (claim !== null && !this.deliveries.has(waiterId)) return { reason: await woken, jobs: [] }
      await this.checkQueues(queues, names, waiterId, registration)
    } catch (error) {
      ended.abort()
      await woken
      if (this.closed) return { reason: 'aborted', jobs: [] }
      throw error
    }
    return { reason: await woken, jobs: [] }
  }

  /**
   * Looks at these queues once (lua/wait-check.lua), registering a waiter for deliveries when given
   * one: wakes the waiters if work is waiting there or a new stop was requested, else arms the
   * timer for the next due job.
   */
  private async checkQueues(
    queues: readonly string[],
    names: readonly string[] = [],
    waiterId = '',
    registration = '',
  ): Promise<void> {
    const [serverNow, waiting, nextDue, stopAt] = (await this.run('wait-check', undefined, [
      waiterId,
      registration,
      String(names.length),
      ...names,
      ...queues,
    ])) as [number, number, string, string | null]
    this.noteServerTime(serverNow, undefined)
    if (stopAt !== this.stopSeen) {
      this.stopSeen = stopAt
      this.hub.broadcast('notified')
    } else if (waiting === 1) this.hub.broadcast('notified')
    else if (nextDue !== '') this.hub.armDue(Number(nextDue), this.serverNow())
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
    // A script of its own before the recovery: it runs only at a worker's start and after a
    // backward step, and the leases it moves were not expired, so the recovery's answer is the same.
    const clamped = clampLeases ? ((await this.run('clamp-leases', now, [])) as number) : 0
    const args: (string | number)[] = [limit]
    if (leases === undefined) {
      args.push('all')
    } else {
      args.push('leases')
      for (const { id, leaseToken, leaseExpiresAt } of leases) {
        if (isJobId(id) && typeof leaseToken === 'string') args.push(id, leaseToken, integer(leaseExpiresAt))
      }
      if (args.length === 2) return { retried: [], dead: [], clamped }
    }
    const [retried, dead] = (await this.run('recover-expired', now, args)) as [string[], string[]]
    return { retried: retried.sort(compareIds), dead: dead.sort(compareIds), clamped }
  }

  async findExpiredLeases({
    now,
    limit = RECOVER_LIMIT_DEFAULT,
  }: FindExpiredLeasesParams = {}): Promise<FindExpiredLeasesResult> {
    this.assertOpen('findExpiredLeases')
    assertPositiveInteger(limit, 'limit')
    const [serverNow, leases, next] = (await this.run('find-expired-leases', now, [limit])) as [
      number,
      [string, string, number, number][],
      string,
    ]
    this.noteServerTime(serverNow, now)
    return {
      now: serverNow,
      nextExpiresAt: next === '' ? null : Number(next),
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
    const checked = checkListJobsParams(params, isJobId)
    if (checked.ids !== undefined) return { jobs: await this.jobsByIds(checked.ids), nextCursor: null }
    const { state, queue, limit, cursor } = checked
    const [flats, resume] = (await this.run('list-jobs', undefined, [
      state ?? '',
      queue ?? '',
      cursor ?? '',
      limit,
      LIST_BUDGET,
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
    const rows = (await this.run('stats', now, [recentWindowMs])) as (string | number)[]
    const counts: StatsCount[] = []
    // Per queue: its name, then a count of each of STATS_ROW in that order (lua/stats.lua).
    for (let i = 0; i < rows.length; i += STATS_ROW.length + 1) {
      const values = rows.slice(i + 1, i + 1 + STATS_ROW.length).map(Number)
      // The script lists every queue it knows; one that holds no job is left out, as elsewhere.
      if (values.slice(0, 5).every((count) => count === 0)) continue
      const queue = String(rows[i])
      STATS_ROW.forEach((of, k) => counts.push({ queue, of, count: values[k]! }))
    }
    return foldStats(counts, recentWindowMs)
  }

  async retry(params: RetryParams): Promise<number> {
    this.assertOpen('retry')
    checkRetryParams(params)
    const { ids, allDead = false, queue, now } = params
    const args = allDead ? ['all', queue ?? ''] : ['ids', ...(ids ?? []).filter(isJobId)]
    if (args.length === 1) return 0
    return (await this.run('retry', now, args)) as number
  }

  async cancel(params: CancelParams): Promise<number> {
    this.assertOpen('cancel')
    checkCancelParams(params)
    const { ids, now } = params
    const valid = ids.filter(isJobId)
    if (valid.length === 0) return 0
    const error: JobError = { kind: 'cancelled', message: 'cancelled by an operator' }
    return (await this.run('cancel', now, [JSON.stringify(error), ...valid])) as number
  }

  async purge(params: PurgeParams): Promise<number> {
    this.assertOpen('purge')
    checkPurgeParams(params)
    const { state, olderThanMs = 0, queue, now } = params
    // One clock for every chunk: the first chunk's server time when no `now` is given.
    const finishedBefore = (now ?? (await this.serverTime())) - olderThanMs
    return purgeInChunks(PURGE_CHUNK, async (limit) => {
      const [deleted, looked] = (await this.run('purge', now, [
        state,
        finishedBefore,
        queue ?? '',
        limit,
      ])) as [number, number]
      return { deleted, looked }
    })
  }

  // ── worker control ─────────────────────────────────────────────────────────────────────────

  async control(params: ControlParams = {}): Promise<ControlRecord> {
    this.assertOpen('control')
    checkControlParams(params)
    const { requestStop = false, now } = params
    // request-stop.lua answers with the record as it now stands: no second read.
    if (requestStop) return { stopRequestedAt: (await this.run('request-stop', now, [])) as number }
    try {
      const at = await this.redis.get(this.keys.stop)
      this.stopSeen = at
      return { stopRequestedAt: at === null ? null : Number(at) }
    } catch (error) {
      throw toStoreError(error, 'control', this.keys)
    }
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

  /** Runs a script: EVALSHA, and EVAL (which caches it again) when the server does not know it. */
  private async run(
    name: ScriptName,
    now: number | undefined,
    args: readonly (string | number)[],
  ): Promise<unknown> {
    const script = SCRIPTS[name]
    const nowArg = now === undefined ? '' : integer(now)
    // Arrays, never spread into a call: a batch of 10,000 jobs is 20,000 arguments.
    const rest = [
      this.keys.scriptKeys.length,
      ...this.prefixArgs,
      nowArg,
      this.instance,
      this.allowEviction ? '1' : '',
    ].concat(args)
    try {
      try {
        return await this.redis.call('EVALSHA', [script.sha].concat(rest as string[]))
      } catch (error) {
        if (!messageOf(error).startsWith('NOSCRIPT')) throw error
        return await this.redis.call('EVAL', [script.source].concat(rest as string[]))
      }
    } catch (error) {
      throw toStoreError(error, name, this.keys)
    }
  }

  private async subscribe(): Promise<void> {
    if (this.subscribed === null) {
      // Wake-ups and deliveries come on shard channels (lua/lib/prelude.lua, lua/lib/deliver.lua): on a
      // cluster, ioredis subscribes to them on the node that owns the namespace's slot, and
      // follows the slot if it moves.
      const subscriber =
        this.redis instanceof Cluster
          ? this.redis.duplicate(undefined, { lazyConnect: true, shardedSubscribers: true })
          : this.redis.duplicate({ lazyConnect: true })
      this.subscriber = subscriber
      subscriber.on('error', () => {})
      subscriber.on('smessage', (channel: string, message: string) => {
        if (channel === this.deliveryChannel) this.onDelivery(message)
        else this.onWake(message)
      })
      // Subscribed again after the first time, every waiter looks again: messages sent meanwhile
      // are lost (and on a cluster, so are the waiters' registrations on a master that died:
      // lua/wait-check.lua does not replicate them). On one server, that is the 'ready' of a
      // connection back after a drop (ioredis subscribes again by itself). On a cluster, a failover
      // or a slot move gives the slot's shard subscriber a new node without a 'ready': ioredis says
      // 'subscribersReady' once it has subscribed there, and a worker that waited through a
      // failover slept on (30 s, the safety net) when the first enqueue on the new master came
      // before that.
      let subscribedOnce = false
      const resubscribed = (): void => {
        if (subscribedOnce) this.hub.broadcast('notified')
      }
      subscriber.on('ready', resubscribed)
      if (subscriber instanceof Cluster) subscriber.on('subscribersReady', resubscribed)
      // A stop requested before the subscription is seen by waitForWork's check, one requested
      // after it arrives as a message.
      this.subscribed = subscriber
        .connect()
        .then(() => subscriber.ssubscribe(this.keys.channel, this.deliveryChannel))
        .then(() => {
          subscribedOnce = true
        })
        .catch((error: unknown) => {
          this.subscribed = null
          this.subscriber = null
          subscriber.disconnect()
          throw toStoreError(error, 'waitForWork', this.keys)
        })
    }
    return this.subscribed
  }

  /**
   * Jobs an enqueue claimed for one of this store's waiters (lua/lib/deliver.lua): '<waiter id> <JSON
   * jobs>', or '<waiter id> #<id>,<id>…' when they were too large to send, to be read here.
   */
  private onDelivery(message: string): void {
    const space = message.indexOf(' ')
    const body = message.slice(space + 1)
    const jobs = body.startsWith('#')
      ? this.readDelivered(body.slice(1).split(','))
      : // Lua's nil travels as false in JSON.
        Promise.resolve(
          (JSON.parse(body) as (string | number | false)[][]).map((reply) =>
            toClaimedReply(reply.map((value) => (value === false ? null : value))),
          ),
        )
    const waiterId = message.slice(0, space)
    const deliver = this.deliveries.get(waiterId)
    if (deliver !== undefined) {
      this.deliveries.delete(waiterId)
      deliver(jobs)
      return
    }
    // Its wait ended just before: back in line, the attempt unused, and waiters woken for them.
    jobs
      .then((list) => {
        if (this.closed || list.length === 0) return
        return this.settle({ settlements: list.map(giveBack) })
      })
      .catch(() => {
        // Unreachable now: the leases run out and recoverExpired puts the jobs back.
      })
  }

  /** Jobs delivered by id, as they are now; one that is no longer active (cancelled) is left out. */
  private async readDelivered(ids: readonly string[]): Promise<ClaimedJob[]> {
    const pipeline = this.redis.pipeline()
    for (const id of ids) pipeline.call('HMGET', this.keys.job(id), ...JOB_FIELDS)
    const replies = (await pipeline.exec()) ?? []
    const jobs: ClaimedJob[] = []
    replies.forEach(([error, fields], i) => {
      const reply = [ids[i]!, ...(fields as JobReply)]
      if (error === null && reply[AT.s!] === 'active') jobs.push(toClaimedReply(reply))
    })
    return jobs
  }

  private onWake(message: string): void {
    switch (message[0]) {
      case 'r':
        this.hub.notify([message.slice(1)])
        break
      case 's': {
        const space = message.indexOf(' ')
        if (this.watched.has(message.slice(space + 1))) {
          this.hub.armDue(Number(message.slice(1, space)), this.serverNow())
        }
        break
      }
      default:
        // 'x' a stop request; 'l' a script found the namespace gone (lua/lib/prelude.lua): the woken
        // workers' next call says so, and they stop.
        this.hub.broadcast('notified')
    }
    // A stop request ('x') is read by the woken worker; waitForWork's check need not wake again.
    if (message === 'x')
      void this.redis.get(this.keys.stop).then(
        (at) => (this.stopSeen = at),
        () => {},
      )
  }

  private noteServerTime(serverNow: number, givenNow: number | undefined): void {
    if (givenNow === undefined) this.clockOffsetMs = serverNow - Date.now()
  }

  private serverNow(): number {
    return Date.now() + this.clockOffsetMs
  }

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
    this.instance = instance
  }

  /**
   * A server that may evict keys when full (any maxmemory-policy but noeviction) deletes jobs,
   * acknowledged or not: refused unless the caller allowed it (allowEviction). The policy comes
   * from INFO memory, which managed services allow where they forbid CONFIG; on a cluster, from
   * every master, since the namespace's slot may move to any of them.
   */
  private async checkEvictionPolicy(warn: (message: string) => void): Promise<void> {
    if (this.allowEviction) return
    const nodes = this.redis instanceof Cluster ? this.redis.nodes('master') : [this.redis]
    for (const node of nodes) {
      let policy: string | undefined
      try {
        const info = (await node.call('INFO', 'memory')) as string
        policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1]
      } catch {
        policy = undefined
      }
      if (policy === undefined) {
        warn(
          "Ferry cannot read the Redis server's maxmemory_policy (INFO memory is not allowed): unless it is noeviction, Redis deletes jobs when its memory is full (docs/backends.md)",
        )
        return
      }
      if (policy !== 'noeviction') {
        throw new StoreUnavailableError(
          `Redis${nodes.length > 1 ? ` node ${node.options.host}:${node.options.port}` : ''} runs with maxmemory-policy ${policy}: when its memory is full it deletes keys, and so jobs, acknowledged or not. Set maxmemory-policy noeviction, or accept losing jobs with allowEviction: true (?allowEviction=true in a store URL; docs/backends.md)`,
          { retryable: false },
        )
      }
    }
  }

  /**
   * An enqueue acknowledged by Redis survives a crash only with appendonly yes and appendfsync
   * always (docs/backends.md): say so at open when the server is set otherwise. (Eviction is
   * checkEvictionPolicy's.)
   */
  private async checkPersistence(warn: (message: string) => void): Promise<void> {
    const config: Record<string, string> = {}
    try {
      const flat = (await this.redis.call('CONFIG', 'GET', 'appendonly', 'appendfsync')) as string[]
      for (let i = 0; i + 1 < flat.length; i += 2) config[flat[i]!] = flat[i + 1]!
    } catch {
      warn(
        "Ferry cannot read the Redis server's persistence settings (CONFIG GET is not allowed): unless it runs with appendonly yes and appendfsync always, acknowledged jobs can be lost in a crash (docs/backends.md)",
      )
      return
    }
    if (config.appendonly !== 'yes') {
      warn(
        'Redis runs without an append-only file (appendonly no): jobs acknowledged since its last snapshot are lost if the server crashes or restarts. Set appendonly yes and appendfsync always (docs/backends.md)',
      )
    } else if (config.appendfsync === 'everysec') {
      warn(
        'Redis syncs its append-only file once a second (appendfsync everysec): jobs acknowledged in the last second or two can be lost if the machine crashes, or the server when its disk is slow. Set appendfsync always (docs/backends.md)',
      )
    } else if (config.appendfsync !== 'always') {
      warn(
        `Redis leaves syncing its append-only file to the OS (appendfsync ${config.appendfsync}): jobs acknowledged in the last half minute or so can be lost if the machine crashes or loses power. Set appendfsync always (docs/backends.md)`,
      )
    }
  }

  private assertOpen(operation: string): void {
    assertOpen(this.closed, operation)
  }
}

/**
 * Parses `redis://…?namespace=name[&cluster=true][&allowEviction=true]` or `rediss://…`; the
 * parameters of DRIVER_URL_PARAMS go to ioredis untouched (none with cluster=true), any other is
 * refused.
 */
export function parseRedisUrl(url: string): RedisStoreOptions {
  const parsed = new URL(url)
  const cluster = booleanParam(parsed, 'cluster')
  assertKnownKeys(
    Object.fromEntries(parsed.searchParams),
    cluster === true ? REDIS_URL_PARAMS : [...REDIS_URL_PARAMS, ...DRIVER_URL_PARAMS],
    'store',
  )
  const options: RedisStoreOptions = {}
  const namespace = parsed.searchParams.get('namespace')
  if (namespace !== null) options.namespace = namespace
  if (cluster !== undefined) options.cluster = cluster
  const allowEviction = booleanParam(parsed, 'allowEviction')
  if (allowEviction !== undefined) options.allowEviction = allowEviction
  for (const name of REDIS_URL_PARAMS) parsed.searchParams.delete(name)
  options.url = parsed.toString()
  return options
}

/** The query parameters of a URL, by name. */
function urlParams(url: string): Record<string, string> {
  try {
    return Object.fromEntries(new URL(url).searchParams)
  } catch {
    throw new ValidationError('invalid_option', 'url', 'is not a valid redis:// URL')
  }
}

/** A `true`/`false` query parameter of a store URL; undefined when absent. */
function booleanParam(url: URL, name: string): boolean | undefined {
  const value = url.searchParams.get(name)
  if (value === null) return undefined
  if (value !== 'true' && value !== 'false') {
    throw new ValidationError('invalid_option', name, `must be true or false (got ${JSON.stringify(value)})`)
  }
  return value === 'true'
}

/** The node a cluster client starts from. A cluster has database 0 only. */
function clusterSeed(url: string): { host: string; port: number } {
  const parsed = new URL(url)
  if (parsed.pathname !== '' && parsed.pathname !== '/' && parsed.pathname !== '/0') {
    throw new ValidationError(
      'invalid_option',
      'url',
      `a Redis Cluster has database 0 only (got ${parsed.pathname})`,
    )
  }
  return { host: parsed.hostname, port: parsed.port === '' ? 6379 : Number(parsed.port) }
}

/** What a cluster client takes from the URL for every node: credentials and TLS. */
function clusterCredentials(url: string): RedisOptions {
  const parsed = new URL(url)
  return {
    ...(parsed.username === '' ? {} : { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password === '' ? {} : { password: decodeURIComponent(parsed.password) }),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  }
}

async function quit(redis: Redis | Cluster): Promise<void> {
  if (redis.status === 'ready') {
    try {
      await redis.quit()
      return
    } catch {
      // fall through: close the socket anyway
    }
  }
  redis.disconnect()
}

function claimArgs({ queues, names = [], limit, leaseMs, workerId }: ClaimParams): string[] {
  return [
    String(limit),
    String(leaseMs),
    workerId,
    newLeaseTokenBase(),
    String(queues.length),
    ...queues,
    String(names.length),
    ...names,
  ]
}

/** The settle script's arguments; `sent` maps its results back to the input (a malformed id is lost). */
function settleArgs(settlements: readonly Settlement[]): { args: string[]; sent: number[] } {
  checkSettlements(settlements)
  const args: string[] = ['0']
  const sent: number[] = []
  settlements.forEach((s, i) => {
    if (!isJobId(s.id) || typeof s.leaseToken !== 'string') return
    switch (s.kind) {
      case 'completed':
        args.push('completed', s.id, s.leaseToken, '', s.result === undefined ? '' : JSON.stringify(s.result))
        break
      case 'retry':
      case 'snoozed':
        args.push(
          s.kind,
          s.id,
          s.leaseToken,
          integer(s.runAt),
          s.kind === 'retry' ? JSON.stringify(s.error) : '',
        )
        break
      case 'dead':
        args.push('dead', s.id, s.leaseToken, '', JSON.stringify(s.error))
        break
    }
    sent.push(i)
  })
  args[0] = String(sent.length)
  return { args, sent }
}

/** Per-item results: 'ok' for the items sent (at `sent`) that the script answered 1 for. */
function mergeSettled(sent: readonly number[], reply: readonly number[], count: number): SettleResult[] {
  return foldResults(count, 'lease_lost', [['ok', sent.filter((_, n) => reply[n] === 1)]])
}

/**
 * A job as the scripts return it: its id, then JOB_FIELDS in order, null where absent. The list is
 * lua/lib/prelude.lua's, generated at embed time, so the scripts and this decoder cannot disagree
 * on the order.
 */
type JobReply = readonly (string | number | null)[]

const JOB_FIELDS: readonly string[] = jobFields

/** Each field's position in a JobReply (the id is 0). */
const AT = Object.fromEntries(JOB_FIELDS.map((field, i) => [field, i + 1])) as Record<string, number>

function toJob(reply: JobReply): Job {
  const text = (field: string): string | null => {
    const value = reply[AT[field]!]
    return value === null || value === undefined ? null : String(value)
  }
  const numberOr = (field: string, absent: number | null): number | null => {
    const value = reply[AT[field]!]
    return value === null || value === undefined ? absent : Number(value)
  }
  const createdAt = Number(reply[AT.c!])
  const lastError = text('e')
  const result = text('r')
  return {
    id: String(reply[0]),
    queue: text('q')!,
    name: text('n')!,
    payload: JSON.parse(text('p')!) as unknown,
    state: text('s') as Job['state'],
    priority: Number(reply[AT.pr!]),
    runAt: Number(reply[AT.ra!]),
    attempts: numberOr('a', 0)!,
    maxAttempts: Number(reply[AT.ma!]),
    timeoutMs: numberOr('to', null),
    uniqueKey: text('uk'),
    lastError: lastError === null ? null : (JSON.parse(lastError) as JobError),
    result: result === null ? null : (JSON.parse(result) as unknown),
    workerId: text('w'),
    leaseExpiresAt: numberOr('le', null),
    createdAt,
    updatedAt: numberOr('u', createdAt)!,
    finishedAt: numberOr('f', null),
  }
}

function toClaimedReply(reply: JobReply): ClaimedJob {
  return toClaimedJob(toJob(reply), String(reply[AT.lt!]))
}

/** An integer as Redis and Lua read it back exactly (no exponent). */
function integer(value: number): string {
  return Number.isSafeInteger(value) ? String(value) : Math.round(value).toFixed(0)
}
