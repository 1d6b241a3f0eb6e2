/**
 * What a Redis store checks of its server at open: that it does not evict keys (jobs) when full,
 * unless allowed, and whether its persistence keeps an acknowledged enqueue through a crash
 * (docs/backends.md). What it cannot read is said, not refused.
 */
import { Cluster, type Redis } from 'ioredis'

import { StoreUnavailableError } from '../../core/errors.js'

/** The warnings process.emitWarning has been given: each is emitted once per process, not per store. */
const emittedWarnings = new Set<string>()

export function emitWarningOnce(message: string): void {
  if (emittedWarnings.has(message)) return
  emittedWarnings.add(message)
  process.emitWarning(message, { code: 'FERRY_REDIS_PERSISTENCE' })
}

/**
 * A server that may evict keys when full (any maxmemory-policy but noeviction) deletes jobs,
 * acknowledged or not: refused unless the caller allowed it (allowEviction). The policy comes
 * from INFO memory, which managed services allow where they forbid CONFIG; on a cluster, from
 * every master, since the namespace's slot may move to any of them.
 */
export async function checkEvictionPolicy(
  redis: Redis | Cluster,
  warn: (message: string) => void,
): Promise<void> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis]
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
export async function checkPersistence(
  redis: Redis | Cluster,
  warn: (message: string) => void,
): Promise<void> {
  const config: Record<string, string> = {}
  try {
    const flat = (await redis.call('CONFIG', 'GET', 'appendonly', 'appendfsync')) as string[]
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
