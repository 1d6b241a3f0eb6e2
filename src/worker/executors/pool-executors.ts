import { assertKnownKeys } from '../../core/option-keys.js'
import type { HandlerSource } from '../handler-module.js'
import { ChildPool } from './pool/child-pool.js'
import {
  FORK_EXECUTOR_OPTION_KEYS,
  type ForkExecutorOptions,
  type PoolExecutorOptions,
} from './pool/pool-options.js'
import { processSpawner } from './pool/spawn-process.js'
import { threadSpawner } from './pool/spawn-thread.js'

// The three strategies that run handlers in children. Each is the child pool with its spawner and
// its rules; what differs between them is only the config below.

export type ThreadsExecutorOptions = PoolExecutorOptions
export type ProcessesExecutorOptions = PoolExecutorOptions
export type { ForkExecutorOptions } from './pool/pool-options.js'

/**
 * Runs handlers in a pool of worker threads that each load the handler module once: CPU-bound
 * work leaves the worker's event loop, and a thread that throws, exits, blocks its loop or runs
 * out of heap fails only its job. It shares the process, though: process.kill of the worker's own
 * pid, native crashes and process-wide state are not isolated (use processes for those).
 */
export class ThreadsExecutor extends ChildPool {
  constructor(handlers: HandlerSource, options: ThreadsExecutorOptions = {}) {
    super(handlers, options, {
      strategy: 'threads',
      noun: 'thread',
      spawnOnDemand: false,
      spawner: threadSpawner,
    })
  }
}

/**
 * Runs handlers in a persistent pool of child processes that each load the handler module once
 * and run many jobs, one at a time (the php-fpm idea): full isolation (a crash, process.exit, a
 * signal, running out of memory or a blocked event loop fails only that job, with its real
 * cause) for an IPC round trip per job instead of a process start.
 */
export class ProcessesExecutor extends ChildPool {
  constructor(handlers: HandlerSource, options: ProcessesExecutorOptions = {}) {
    super(handlers, options, {
      strategy: 'processes',
      noun: 'process',
      spawnOnDemand: false,
      spawner: processSpawner,
    })
  }
}

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
    const config = {
      strategy: 'fork',
      noun: 'process',
      spawnOnDemand: true,
      spawner: processSpawner,
    } as const
    super(handlers, options, config, { maxJobsPerChild: 1 })
  }
}
