import { assertBackoffOptions, type BackoffOptions } from '../core/backoff.js'
import { ValidationError } from '../core/errors.js'
import { assertInteger, assertQueueList, MAX_TIMEOUT_MS } from '../core/validate.js'
import { assertKnownKeys, optionKeys } from '../core/option-keys.js'
import { normalizeSchedule, type ScheduleDefinition, type ScheduleOptions } from '../core/schedule.js'
import type { Store } from '../store/store.js'
import { createExecutor, type ExecutionStrategy } from './executors/create-executor.js'
import type { Executor } from './executors/executor.js'
import {
  FORK_EXECUTOR_OPTION_KEYS,
  poolSettings,
  POOL_EXECUTOR_OPTION_KEYS,
  type PoolExecutorOptions,
} from './executors/pool/pool-options.js'
import type { HandlerSource } from './handler-module.js'
import type { PrefetchSetting } from './prefetch.js'
import type { TracingOption } from '../tracing/tracing-option.js'
import { THROUGHPUT_KEEP_MS } from '../store/kernel/workers.js'
import { TTL_HEARTBEATS } from './worker-heartbeat.js'

/** The longest heartbeat interval: its record's ttl (three of them) is at most a day. */
const HEARTBEAT_MAX_MS = THROUGHPUT_KEEP_MS / TTL_HEARTBEATS

export interface WorkerOptions {
  store: Store
  /** Handlers, or the path/URL of a module whose default export maps job names to handlers. */
  handlers: HandlerSource
  /** Queues in strict priority order: a job of an earlier queue always goes first. Default ['default']. */
  queues?: string[]
  /** Jobs run at once. Default 10. */
  concurrency?: number
  /**
   * Jobs claimed ahead and held, beyond `concurrency`, so a slot that frees up starts its next job
   * at once instead of after a store round trip, and the worker runs jobs while the store writes
   * the last ones. Held jobs are leased to this worker (renewed like running ones), so no other
   * worker takes them meanwhile. 'auto' (the default) holds only jobs that would start within
   * about 20 ms, from the measured run time of the last jobs: up to `concurrency` for short jobs,
   * none for long ones (prefetch.ts). A number holds that many whatever the jobs do; 0 never holds.
   * A stopping worker gives its held jobs back, in their place in line and without using an attempt.
   */
  prefetch?: PrefetchSetting
  /** How long a claim holds a job without renewal; renewed every third of it. Default 30 s. */
  leaseMs?: number
  /** Time limit per attempt for jobs that set none. Default: none. */
  defaultTimeoutMs?: number | null
  backoff?: BackoffOptions
  /** Stop after claiming this many jobs (and finishing them). */
  jobLimit?: number
  /** Stop after running this long. */
  timeLimitMs?: number
  /** Stop once the process's resident memory passes this, checked after each job. */
  memoryLimitBytes?: number
  /** How often to look for jobs whose lease expired. Default: a third of the lease, at most 10 s,
   * so a short lease also means a dead worker's jobs (and jobs handed to a waiter that froze) come
   * back soon. */
  recoverIntervalMs?: number
  /**
   * How often the worker writes its record to the store's registry of workers (host, pid, queues,
   * running jobs: `ferry workers`, listWorkers) with the jobs it settled per minute (getThroughput).
   * One small write per interval, none per job; the record lasts three intervals, so a worker that
   * was killed leaves the list within three. Default 5,000 ms.
   */
  heartbeatMs?: number
  /** Defaults to host:pid:random. */
  workerId?: string
  /**
   * How handlers run (docs/strategies.md): 'inline' (on this event loop), or in a pool of
   * children, 'threads', 'processes' or 'fork' (with `handlers` as a module path). Default 'inline'.
   */
  strategy?: ExecutionStrategy
  /**
   * The pool of the threads, processes and fork strategies: its `size` is `concurrency` unless
   * given; recycling (`maxJobsPerChild`, `maxRssBytes`) applies to threads and processes only.
   */
  pool?: PoolExecutorOptions
  /** An executor of your own, instead of `strategy` and `pool`; the worker starts and closes it. */
  executor?: Executor
  /**
   * Schedules to create, or update, in the store when the worker starts (docs/schedules.md).
   * Additive: schedules of the store not listed here stay, so apps sharing a store keep theirs;
   * remove one with `ferry schedules remove` or removeSchedules().
   */
  schedules?: ScheduleOptions[]
  /**
   * Whether this worker fires the store's schedules. Default true: every worker may, and each slot
   * still fires once. False for workers that should only run jobs.
   */
  scheduler?: boolean
  /**
   * Whether this worker deletes finished jobs past their retention (docs/retention.md), a batch at
   * a time, about every `retentionIntervalMs`. Default true: every worker may, and they share the
   * work. False for workers that should only run jobs (some other worker, or `ferry purge`, keeps
   * the store's size).
   */
  retention?: boolean
  /** About how long between two retention sweeps. Default 60,000 ms (a minute). */
  retentionIntervalMs?: number
  /**
   * Whether each attempt runs in an OpenTelemetry span that continues its enqueue's trace
   * (docs/tracing.md). Default: on when `@opentelemetry/api` is installed, unless FERRY_TRACING=off.
   */
  tracing?: TracingOption
}

const WORKER_OPTION_KEYS = optionKeys<WorkerOptions>({
  store: true,
  handlers: true,
  queues: true,
  concurrency: true,
  prefetch: true,
  leaseMs: true,
  defaultTimeoutMs: true,
  backoff: true,
  jobLimit: true,
  timeLimitMs: true,
  memoryLimitBytes: true,
  recoverIntervalMs: true,
  workerId: true,
  heartbeatMs: true,
  strategy: true,
  pool: true,
  executor: true,
  schedules: true,
  scheduler: true,
  retention: true,
  retentionIntervalMs: true,
  tracing: true,
})

/** Worker options checked, with their defaults filled in. */
export interface WorkerSettings {
  queues: string[]
  concurrency: number
  prefetch: PrefetchSetting
  leaseMs: number
  /** The schedules to write at start, checked; null when the worker runs no scheduler. */
  schedules: ScheduleDefinition[] | null
}

/** Refuses worker options that are unknown or out of range, before the worker does anything. */
export function workerSettings(options: WorkerOptions): WorkerSettings {
  assertKnownKeys(options, WORKER_OPTION_KEYS, '')
  const { queues = ['default'], concurrency = 10, prefetch = 'auto', leaseMs = 30_000 } = options
  assertQueueList(queues)
  assertInteger(concurrency, 'concurrency', { min: 1, max: 10_000 })
  if (prefetch !== 'auto') assertInteger(prefetch, 'prefetch', { min: 0, max: 10_000, orWord: 'auto' })
  assertInteger(leaseMs, 'leaseMs', { min: 1, max: MAX_TIMEOUT_MS })
  if (leaseMs < 100) throw new ValidationError('invalid_option', 'leaseMs', 'must be at least 100 ms')
  if (options.jobLimit !== undefined) assertInteger(options.jobLimit, 'jobLimit', { min: 1 })
  if (options.timeLimitMs !== undefined)
    assertInteger(options.timeLimitMs, 'timeLimitMs', { min: 1, max: MAX_TIMEOUT_MS })
  if (options.recoverIntervalMs !== undefined) {
    assertInteger(options.recoverIntervalMs, 'recoverIntervalMs', { min: 1, max: MAX_TIMEOUT_MS })
  }
  if (options.retention !== undefined && typeof options.retention !== 'boolean') {
    throw new ValidationError('invalid_option', 'retention', 'must be true or false')
  }
  if (options.retentionIntervalMs !== undefined) {
    assertInteger(options.retentionIntervalMs, 'retentionIntervalMs', { min: 1, max: MAX_TIMEOUT_MS })
  }
  if (options.heartbeatMs !== undefined) {
    // Its record lasts three of them, and a record may last a day at most (Store.heartbeat's ttlMs).
    assertInteger(options.heartbeatMs, 'heartbeatMs', { min: 1, max: HEARTBEAT_MAX_MS })
  }
  if (options.memoryLimitBytes !== undefined) {
    assertInteger(options.memoryLimitBytes, 'memoryLimitBytes', { min: 1 })
  }
  if (options.defaultTimeoutMs != null)
    assertInteger(options.defaultTimeoutMs, 'defaultTimeoutMs', { min: 1, max: MAX_TIMEOUT_MS })
  if (options.backoff !== undefined) assertBackoffOptions(options.backoff, 'backoff')
  const { schedules = [], scheduler = true } = options
  if (typeof scheduler !== 'boolean')
    throw new ValidationError('invalid_option', 'scheduler', 'must be true or false')
  if (!Array.isArray(schedules))
    throw new ValidationError('invalid_option', 'schedules', 'must be a list of schedules')
  if (!scheduler && schedules.length > 0) {
    throw new ValidationError('invalid_option', 'schedules', 'needs the scheduler: remove scheduler: false')
  }
  const definitions = schedules.map((schedule, i) => normalizeSchedule(schedule, `schedules[${i}]`))
  return { queues: [...queues], concurrency, prefetch, leaseMs, schedules: scheduler ? definitions : null }
}

/** The executor the options ask for: the user's own, or one of the strategy with a pool of `concurrency`. */
export function workerExecutor(options: WorkerOptions, concurrency: number): Executor {
  const { executor, strategy = 'inline', pool } = options
  if (executor !== undefined) {
    if (options.strategy !== undefined || pool !== undefined) {
      const given = options.strategy !== undefined ? 'strategy' : 'pool'
      throw new ValidationError('invalid_option', given, 'give an executor, or a strategy and pool, not both')
    }
    return executor
  }
  if (pool === undefined) return createExecutor(strategy, options.handlers, { size: concurrency })
  if (strategy === 'inline') {
    throw new ValidationError(
      'invalid_option',
      'pool',
      'applies to the threads, processes and fork strategies only (inline runs no children)',
    )
  }
  // Checked here, so that an error names the option where it sits: `pool.maxJobsPerChild`.
  poolSettings(pool, 'pool', strategy === 'fork' ? FORK_EXECUTOR_OPTION_KEYS : POOL_EXECUTOR_OPTION_KEYS)
  return createExecutor(strategy, options.handlers, { size: concurrency, ...pool })
}
