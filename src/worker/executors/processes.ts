import type { HandlerSource } from '../handler-module.js'
import { ChildPool } from './pool/child-pool.js'
import type { PoolExecutorOptions } from './pool/pool-options.js'
import { processSpawner } from './pool/spawn-process.js'

export type ProcessesExecutorOptions = PoolExecutorOptions

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
