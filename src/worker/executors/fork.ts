import { assertKnownKeys } from '../../core/validate.js'
import type { HandlerSource } from '../handler-module.js'
import { ChildPool } from './pool/child-pool.js'
import { FORK_EXECUTOR_OPTION_KEYS, type ForkExecutorOptions } from './pool/pool-options.js'
import { processSpawner } from './pool/spawn-process.js'

export type { ForkExecutorOptions } from './pool/pool-options.js'

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
    super(
      handlers,
      options,
      { strategy: 'fork', noun: 'process', spawnOnDemand: true, spawner: processSpawner },
      { maxJobsPerChild: 1 },
    )
  }
}
