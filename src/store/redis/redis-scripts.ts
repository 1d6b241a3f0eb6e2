/**
 * The Redis store's scripts (lua/*.lua, embedded at build time into generated/assets.ts). They run
 * as the functions of one library (Redis Functions: FUNCTION LOAD once, then FCALL), whose shared
 * definitions (lua/lib/) are made once, when the library is loaded, instead of on every call. The
 * library is loaded on every master at open, and again when a node answers that it does not know a
 * function (a restart without persistence, FUNCTION FLUSH, a node that joined since): Redis keeps
 * functions in the AOF and the RDB and sends them to replicas, so a restart or failover with
 * persistence keeps them. Where functions cannot be loaded (an ACL without FUNCTION, a proxy that
 * does not pass it on), the store runs the same code as scripts: EVALSHA, with EVAL (which caches
 * the script again) when the server answers NOSCRIPT. Their return codes and Redis's errors become
 * Ferry's here, and only here. The key layouts lua/migrate.lua knows are listed here too: they are
 * the namespace's migrations.
 *
 * Server time of a serial enqueue (one job), measured as instructions per call of redis-server
 * under callgrind (deterministic where time on this shared 2-core machine is not; LPUSH: 14,000):
 * 309,000 as a script before, 291,000 as a script now (numbers sent as text, a known queue not
 * added again), 175,000 as a function (definitions made at load, key names kept between calls of
 * one namespace, a single job's ZADDs sent straight). tests/store/redis-scripts.test.ts.
 */
import { Cluster, type Redis } from 'ioredis'
import { createHash } from 'node:crypto'

import { type FerryError, StoreUnavailableError } from '../../core/errors.js'
import { wrapDriverError } from '../kernel/driver-errors.js'
import { numberedSteps, type SchemaStep, SchemaVersions } from '../kernel/migrations.js'
import { messageOf } from '../params.js'
import { library, scripts } from './generated/assets.js'
import { integer } from './redis-encoding.js'
import type { RedisKeys } from './keys.js'

export type ScriptName = keyof typeof scripts

interface Script {
  name: ScriptName
  source: string
  sha: string
}

/** Every script, as its lua/*.lua file composes it from its includes (scripts/embed-assets.mjs). */
const SCRIPTS = Object.fromEntries(
  Object.entries(scripts).map(([name, source]) => [
    name,
    { name, source, sha: createHash('sha1').update(source).digest('hex') },
  ]),
) as Record<ScriptName, Script>

/**
 * The key layouts lua/migrate.lua knows, in order: the namespace's version is how many it has
 * (`ferry migrate` lists those it applied by these names).
 */
export const KEY_LAYOUTS: readonly string[] = [
  '0001_key-layout',
  '0002_instance-marker',
  '0003_ready-by-name',
  '0004_ready-by-group',
  '0005_schedules',
  '0006_unique-modes',
  '0007_retention',
]
const LAYOUT_STEPS = numberedSteps(KEY_LAYOUTS)

/** The key layouts as a namespace's migrations, and the errors that name it. */
export function layoutVersions(keys: RedisKeys): SchemaVersions<SchemaStep> {
  return new SchemaVersions(LAYOUT_STEPS, {
    subject: `Redis namespace ${keys.namespace}`,
    versionNoun: 'key layout version',
  })
}
/** Script return codes and Redis errors become Ferry errors here, and only here. */
export function toStoreError(error: unknown, operation: string, keys: RedisKeys): unknown {
  return wrapDriverError(error, (error) => describeError(error, operation, keys))
}

function describeError(error: unknown, operation: string, keys: RedisKeys): string | FerryError {
  const message = messageOf(error)
  const coded = /FERRY (\w+) ?(.*)/.exec(message)
  if (coded?.[1] === 'schema_too_new') return layoutVersions(keys).tooNew(Number(coded[2]))
  if (coded?.[1] === 'namespace_lost') {
    // lua/lib/prelude.lua: the namespace's instance marker is not the one this store opened.
    const what =
      coded[2] === 'replaced'
        ? `its instance marker (${keys.instance}) is not the one this store opened: the server was emptied and another process has started a fresh namespace there since`
        : `its instance marker (${keys.instance}) is missing: the server was emptied (FLUSHALL or FLUSHDB, a restart or failover without persistence) or the namespace's keys were deleted`
    return new StoreUnavailableError(
      `Redis (${operation}): namespace '${keys.namespace}' is gone from under this store: ${what}. The jobs it held are lost; Ferry does not recreate the namespace under running workers. Restart the workers and producers: a new process opens a fresh namespace`,
      { cause: error, retryable: false },
    )
  }
  return `Redis (${operation}): ${message}`
}

/** Runs the scripts on a store's connection, with the arguments every script takes first. */
export class RedisScripts {
  /**
   * The namespace's instance marker, read at open (lua/migrate.lua) and passed to every script,
   * which refuses to run on a namespace with another or none (lua/lib/prelude.lua). '' until then.
   */
  instance = ''
  /** What every call starts with after the SHA: one key (the id counter: a cluster client routes
   * by it), then the root the script forms every other key name from (lua/lib/prelude.lua). */
  private readonly prefixArgs: readonly (string | number)[]

  constructor(
    private readonly redis: Redis | Cluster,
    private readonly keys: RedisKeys,
    private readonly allowEviction: boolean,
  ) {
    this.prefixArgs = [1, keys.scriptKeys[0]!, keys.root]
  }

  /**
   * Functions (FCALL), or scripts (EVALSHA) once functions could not be loaded: for the rest of the
   * store's life, so that a store never goes back and forth.
   */
  private mode: 'functions' | 'scripts' = 'functions'
  /** A load of the library in progress: the calls that found it missing wait for the same one. */
  private loading: Promise<boolean> | null = null

  /**
   * Loads the library on every master (a cluster's each), so that calls run from the first one;
   * where that is refused, puts every script in the server's cache instead. Else the first burst
   * after a start went twice: calls pipelined before the first NOSCRIPT came back all failed, and
   * were sent again whole, with the script's source (run()). A node that lacks the library or a
   * script later gets it from run(). Where SCRIPT is not allowed either (an ACL), run() does the same.
   */
  async load(): Promise<void> {
    if (this.mode === 'functions' && (await this.loadLibrary())) return
    const sources = Object.values(SCRIPTS).map((script) => script.source)
    await Promise.all(
      this.masters().flatMap((node) => sources.map((source) => node.call('SCRIPT', 'LOAD', source))),
    ).catch(() => {})
  }

  /** Runs a script: FCALL of its function, or EVALSHA and EVAL (scripts mode). */
  async run(name: ScriptName, now: number | undefined, args: readonly (string | number)[]): Promise<unknown> {
    const nowArg = now === undefined ? '' : integer(now)
    // Arrays, never spread into a call: a batch of 10,000 jobs is 20,000 arguments.
    const rest = [...this.prefixArgs, nowArg, this.instance, this.allowEviction ? '1' : ''].concat(
      args,
    ) as string[]
    try {
      if (this.mode === 'functions') {
        const fn: string = library.functions[name]
        try {
          return await this.redis.call('FCALL', [fn].concat(rest))
        } catch (error) {
          if (!messageOf(error).startsWith('ERR Function not found')) throw error
        }
        // Nothing ran: the node does not know the library. Loaded again, the call goes again.
        if (await this.reloadLibrary()) return await this.redis.call('FCALL', [fn].concat(rest))
      }
      const script = SCRIPTS[name]
      try {
        return await this.redis.call('EVALSHA', [script.sha].concat(rest))
      } catch (error) {
        if (!messageOf(error).startsWith('NOSCRIPT')) throw error
        return await this.redis.call('EVAL', [script.source].concat(rest))
      }
    } catch (error) {
      throw toStoreError(error, name, this.keys)
    }
  }

  private masters(): (Redis | Cluster)[] {
    return this.redis instanceof Cluster ? this.redis.nodes('master') : [this.redis]
  }

  private reloadLibrary(): Promise<boolean> {
    this.loading ??= this.loadLibrary().finally(() => (this.loading = null))
    return this.loading
  }

  /**
   * FUNCTION LOAD on every master; true once each has the library (one that had it already says
   * so). False, and scripts from now on, when a node refuses it.
   */
  private async loadLibrary(): Promise<boolean> {
    try {
      await Promise.all(
        this.masters().map((node) =>
          node.call('FUNCTION', 'LOAD', library.source).catch((error: unknown) => {
            if (!/^ERR Library '.*' already exists/.test(messageOf(error))) throw error
          }),
        ),
      )
      return true
    } catch {
      this.mode = 'scripts'
      return false
    }
  }
}
