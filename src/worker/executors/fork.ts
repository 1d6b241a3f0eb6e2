import type { HandlerSource } from '../handler-module.js'
import { assertKnownKeys, optionKeys } from '../../core/validate.js'
import { ChildPool, type PoolExecutorOptions } from './child-pool.js'
import { processPoolConfig } from './processes.js'

/** The fork strategy takes the pool options but never reuses a child. */
export type ForkExecutorOptions = Omit<PoolExecutorOptions, 'maxJobsPerChild' | 'maxRssBytes'>

const FORK_EXECUTOR_OPTION_KEYS = optionKeys<ForkExecutorOptions>({
  size: true,
  maxHeapMb: true,
  killGraceMs: true,
  startTimeoutMs: true,
  stdout: true,
  stderr: true,
})

/**
 * A new child process for every job (php-resque's model): full isolation and fresh memory each
 * time, at the cost of a process start and a module load per job. Children are spawned when jobs
 * arrive, up to `size` at once; start() loads the module in one child to check it, and that
 * child, which has run nothing yet, takes the first job.
 */
export class ForkExecutor extends ChildPool {
  constructor(handlers: HandlerSource, options: ForkExecutorOptions = {}) {
    // The pool's own check would let the two recycling options through: a child runs one job here.
    assertKnownKeys(options, FORK_EXECUTOR_OPTION_KEYS, '')
    super(handlers, options, processPoolConfig('fork', options, true), { maxJobsPerChild: 1 })
  }
}
