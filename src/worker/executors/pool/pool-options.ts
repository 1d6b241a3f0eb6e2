import { availableParallelism } from 'node:os'
import { assertInteger } from '../../../core/validate.js'
import { assertKnownKeys, optionKeys } from '../../../core/option-keys.js'

/** Options shared by the isolating executors (threads, processes, fork). */
export interface PoolExecutorOptions {
  /**
   * Children (processes or threads) in the pool: attempts that run at once; more wait for a free
   * child. The worker's concurrency is the natural value (a Worker passes it). Default: the
   * number of CPUs.
   */
  size?: number
  /**
   * Recycle a child after it ran this many jobs (php-fpm's pm.max_requests): bounds what a slow
   * leak can accumulate. Default 10,000; null for never. A pool that recycles keeps one spare
   * child loaded beyond `size`, so a leaving child's successor is ready at once.
   */
  maxJobsPerChild?: number | null
  /**
   * Recycle a child, after its job, once the memory it reports passed this: the process's RSS,
   * or for a thread its own heap (a thread's RSS is the whole process's). Default: none.
   */
  maxRssBytes?: number | null
  /**
   * Heap limit of each child in MB (`--max-old-space-size` for processes, `resourceLimits` for
   * threads): a job that passes it fails as 'ran out of memory' and the child is replaced.
   * Default: none, Node's own limit (a low default would break jobs that legitimately need memory).
   */
  maxHeapMb?: number | null
  /**
   * After an abort, how long a child has to answer before it is killed, and how long a child asked
   * to exit may take. Default 2000.
   */
  killGraceMs?: number
  /** How long a child may take to load the handler module. Default 30 s. */
  startTimeoutMs?: number
  /** Where children's output goes, line by line with a `[job <id>]` prefix. Default: this process's. */
  stdout?: NodeJS.WritableStream
  stderr?: NodeJS.WritableStream
}

/** The fork strategy takes the pool options but never reuses a child. */
export type ForkExecutorOptions = Omit<PoolExecutorOptions, 'maxJobsPerChild' | 'maxRssBytes'>

export const POOL_EXECUTOR_OPTION_KEYS = optionKeys<PoolExecutorOptions>({
  size: true,
  maxJobsPerChild: true,
  maxRssBytes: true,
  maxHeapMb: true,
  killGraceMs: true,
  startTimeoutMs: true,
  stdout: true,
  stderr: true,
})

export const FORK_EXECUTOR_OPTION_KEYS = optionKeys<ForkExecutorOptions>({
  size: true,
  maxHeapMb: true,
  killGraceMs: true,
  startTimeoutMs: true,
  stdout: true,
  stderr: true,
})

/**
 * Bounds what a slow leak can pile up, yet leaves a child warm most of its life: a new child runs
 * its first ~1,000 jobs slower while V8 optimizes the message path (a bare IPC round trip 0.2–0.3
 * ms on average over those, 0.05–0.08 ms afterwards, on the benchmark machine), so recycling every
 * 1,000 jobs kept every child cold; every 10,000 makes the warm-up a tenth of its life.
 */
const DEFAULT_MAX_JOBS_PER_CHILD = 10_000
const DEFAULT_KILL_GRACE_MS = 2000
const DEFAULT_START_TIMEOUT_MS = 30_000

/** Pool options checked, with their defaults filled in. */
export interface PoolSettings {
  size: number
  maxJobsPerChild: number | null
  maxMemoryBytes: number | null
  /** The heap limit a child is started with (`maxHeapMb`); null: Node's default. */
  heapLimitMb: number | null
  killGraceMs: number
  startTimeoutMs: number
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
}

/**
 * Checks pool options (an unknown key, a count that is not a positive integer) and fills in the
 * defaults. `field` is where the options sit ('' at the top, `pool` inside a worker's options), so
 * an error names the option as its caller wrote it. `keys`: the options the strategy takes.
 */
export function poolSettings(
  options: PoolExecutorOptions,
  field: string,
  keys: readonly string[] = POOL_EXECUTOR_OPTION_KEYS,
): PoolSettings {
  assertKnownKeys(options, keys, field)
  const at = (key: string): string => (field === '' ? key : `${field}.${key}`)
  const count = (value: unknown, key: string): number => {
    assertInteger(value, at(key), { min: 1 })
    return value
  }
  const maxJobs = options.maxJobsPerChild
  return {
    size: count(options.size ?? availableParallelism(), 'size'),
    maxJobsPerChild:
      maxJobs === null ? null : count(maxJobs ?? DEFAULT_MAX_JOBS_PER_CHILD, 'maxJobsPerChild'),
    maxMemoryBytes: options.maxRssBytes == null ? null : count(options.maxRssBytes, 'maxRssBytes'),
    heapLimitMb: options.maxHeapMb == null ? null : count(options.maxHeapMb, 'maxHeapMb'),
    killGraceMs: count(options.killGraceMs ?? DEFAULT_KILL_GRACE_MS, 'killGraceMs'),
    startTimeoutMs: count(options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS, 'startTimeoutMs'),
    stdout: options.stdout ?? process.stdout,
    stderr: options.stderr ?? process.stderr,
  }
}
