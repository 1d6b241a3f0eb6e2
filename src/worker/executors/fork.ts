import type { HandlerSource } from '../handler-module.js'
import { ChildPool, type PoolExecutorOptions } from './child-pool.js'
import { processPoolConfig } from './processes.js'

/** The fork strategy takes the pool options but never reuses a child. */
export type ForkExecutorOptions = Omit<PoolExecutorOptions, 'maxJobsPerChild' | 'maxRssBytes'>

/**
 * A new child process for every job (php-resque's model): full isolation and fresh memory each
 * time, at the cost of a process start and a module load per job. Children are spawned when jobs
 * arrive, up to `size` at once; start() loads the module in one child to check it, and that
 * child, which has run nothing yet, takes the first job.
 */
export class ForkExecutor extends ChildPool {
  constructor(handlers: HandlerSource, options: ForkExecutorOptions = {}) {
    super(handlers, options, processPoolConfig('fork', options, true), { maxJobsPerChild: 1 })
  }
}
