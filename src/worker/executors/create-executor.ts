import { ValidationError } from '../../core/errors.js'
import { assertKnownKeys } from '../../core/option-keys.js'
import type { HandlerSource } from '../handler-module.js'
import { POOL_EXECUTOR_OPTION_KEYS, type PoolExecutorOptions } from './pool/pool-options.js'
import type { Executor } from './executor.js'
import { ForkExecutor, ProcessesExecutor, ThreadsExecutor } from './pool-executors.js'
import { InlineExecutor } from './inline.js'

export type ExecutionStrategy = Executor['strategy']

export const EXECUTION_STRATEGIES: readonly ExecutionStrategy[] = ['inline', 'threads', 'processes', 'fork']

/** The strategies that keep a child between jobs, so recycling options (maxJobsPerChild, maxRssBytes) mean something. */
export const RECYCLING_STRATEGIES: readonly ExecutionStrategy[] = ['threads', 'processes']

/**
 * The executor for a strategy. Pass the worker's concurrency as `size`, so the pool has a child
 * for every job the worker runs at once; the pool options do not apply to inline.
 */
export function createExecutor(
  strategy: ExecutionStrategy,
  handlers: HandlerSource,
  options: PoolExecutorOptions = {},
): Executor {
  // Checked for inline too, which takes none of them: a typo is a typo whatever the strategy.
  assertKnownKeys(options, POOL_EXECUTOR_OPTION_KEYS, '')
  switch (strategy) {
    case 'inline':
      return new InlineExecutor(handlers)
    case 'threads':
      return new ThreadsExecutor(handlers, options)
    case 'processes':
      return new ProcessesExecutor(handlers, options)
    case 'fork': {
      const { maxJobsPerChild: _maxJobs, maxRssBytes: _maxRss, ...forkOptions } = options
      return new ForkExecutor(handlers, forkOptions)
    }
    default:
      throw new ValidationError(
        'invalid_option',
        'strategy',
        `must be one of ${EXECUTION_STRATEGIES.join(', ')} (got ${String(strategy)})`,
      )
  }
}
