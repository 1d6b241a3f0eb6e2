import type { HandlerSource } from '../handler-module.js'
import { ChildPool } from './pool/child-pool.js'
import type { PoolExecutorOptions } from './pool/pool-options.js'
import { threadSpawner } from './pool/spawn-thread.js'

export type ThreadsExecutorOptions = PoolExecutorOptions

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
