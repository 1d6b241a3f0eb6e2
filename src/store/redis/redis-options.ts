/**
 * What a Redis store is opened with: its options, the store URL that sets them
 * (`redis://…?namespace=…&cluster=true&allowEviction=true`), and the ioredis client they make. A
 * URL parameter that ioredis would take as an option in silence is refused.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis'

import { StoreUnavailableError, ValidationError } from '../../core/errors.js'
import { assertKnownKeys, optionKeys } from '../../core/option-keys.js'
import { osErrorOf, serverAddress } from '../connection-error.js'
import { messageOf } from '../params.js'

export interface RedisStoreOptions {
  /** `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS). Default redis://127.0.0.1:6379. */
  url?: string
  /** More ioredis options (TLS, sentinels, timeouts); Ferry sets its own retry and resend policy. */
  connection?: RedisOptions
  /**
   * The server is a Redis Cluster and `url` names one of its nodes (`?cluster=true` in a store
   * URL): the client finds the others and follows the slots as they move. Every key of a namespace
   * shares one hash tag, so each script runs whole on the node that holds that slot.
   */
  cluster?: boolean
  /** Keeps this Ferry's keys apart from others' on the same server: `ferry:{namespace}:…`. Default 'default'. */
  namespace?: string
  /** Record the key layout's version on open (default). When false, an unversioned namespace is an error. */
  migrate?: boolean
  /**
   * Open even when the server may evict keys (a `maxmemory-policy` other than `noeviction`;
   * `?allowEviction=true` in a store URL). Without it, such a server is refused at open: when
   * Redis is full it deletes keys, and so jobs. With it, the scripts clean up after what was
   * evicted (an index entry whose job is gone) instead of failing, but evicted jobs are lost.
   */
  allowEviction?: boolean
  /**
   * Called at open when the server's persistence cannot keep an acknowledged enqueue through a
   * crash (docs/backends.md). Default: process.emitWarning, once per process for each warning.
   * Pass `() => {}` to silence it.
   */
  onWarning?: (message: string) => void
}

const REDIS_OPTION_KEYS = optionKeys<RedisStoreOptions>({
  url: true,
  connection: true,
  cluster: true,
  namespace: true,
  migrate: true,
  allowEviction: true,
  onWarning: true,
})

/** The options a redis:// URL may set for Ferry, by their names in RedisStoreOptions. */
const REDIS_URL_PARAMS = [
  'namespace',
  'cluster',
  'allowEviction',
] as const satisfies readonly (keyof RedisStoreOptions)[]

/**
 * The query parameters of a redis:// URL that ioredis 6 takes as connection options and that keep
 * their meaning as text. ioredis makes an option of any parameter, which a typo then is in silence;
 * these are the ones a URL needs. A Cluster client reads no parameter of its seed URL at all.
 */
const DRIVER_URL_PARAMS = ['db', 'family', 'username', 'password', 'connectionName'] as const

const DEFAULT_URL = 'redis://127.0.0.1:6379'
const DEFAULT_PORT = 6379

/** Refuses unknown keys: before connecting, a misspelt namespace must not write into the default one. */
export function assertRedisOptionKeys(options: RedisStoreOptions): void {
  assertKnownKeys(options, REDIS_OPTION_KEYS, '')
}

/**
 * The client of a store with these options (not connected yet), and its server's host:port for
 * the messages of connection errors.
 */
export function createRedisClient(options: RedisStoreOptions): { redis: Redis | Cluster; server: string } {
  const url = options.url ?? DEFAULT_URL
  if (!/^rediss?:\/\//i.test(url)) {
    throw new ValidationError('invalid_option', 'url', `must start with redis:// or rediss:// (got ${url})`)
  }
  // Ferry's own parameters belong beside the URL here (openStore takes them out of its URL).
  assertKnownKeys(urlParams(url), options.cluster === true ? [] : DRIVER_URL_PARAMS, 'url')
  const connection: RedisOptions = {
    ...options.connection,
    maxRetriesPerRequest: 3,
    // A command in flight when the connection dropped may have run: never send it twice (an
    // enqueue would be doubled). Its caller gets an error and decides.
    autoResendUnfulfilledCommands: false,
    // How long disconnect() waits for a socket to close before destroying it: the timer stays
    // even when the server is already gone, and kept a closed store's process alive for 2 s.
    disconnectTimeout: 100,
  }
  // Reconnect for ever, at most a second apart; a call made meanwhile waits in the offline
  // queue, and fails after a few reconnection attempts so the worker's backoff takes over.
  const retry = (times: number): number => Math.min(times * 50, 1000)
  const redis = options.cluster
    ? new Cluster([clusterSeed(url)], {
        lazyConnect: true,
        clusterRetryStrategy: retry,
        redisOptions: { ...connection, ...clusterCredentials(url) },
      })
    : new Redis(url, { ...connection, lazyConnect: true, retryStrategy: retry })
  return { redis, server: serverAddress(url, DEFAULT_PORT) }
}

/** Connects a client of createRedisClient; a failure says why, from the client's latest error. */
export async function connectRedis(
  redis: Redis | Cluster,
  server: string,
  lastClientError: () => unknown,
): Promise<void> {
  try {
    await redis.connect()
  } catch (error) {
    const reason = lastClientError() ?? error
    const message = messageOf(reason)
    const why =
      osErrorOf(reason)?.text ??
      (message === 'Connection is closed.'
        ? 'the connection was closed before the server answered: is a Redis server listening there?'
        : message)
    throw new StoreUnavailableError(`cannot connect to Redis at ${server}: ${why}`, { cause: reason })
  }
}

/**
 * Parses `redis://…?namespace=name[&cluster=true][&allowEviction=true]` or `rediss://…`; the
 * parameters of DRIVER_URL_PARAMS go to ioredis untouched (none with cluster=true), any other is
 * refused.
 */
export function parseRedisUrl(url: string): RedisStoreOptions {
  const parsed = new URL(url)
  const cluster = booleanParam(parsed, 'cluster')
  assertKnownKeys(
    Object.fromEntries(parsed.searchParams),
    cluster === true ? REDIS_URL_PARAMS : [...REDIS_URL_PARAMS, ...DRIVER_URL_PARAMS],
    'store',
  )
  const options: RedisStoreOptions = {}
  const namespace = parsed.searchParams.get('namespace')
  if (namespace !== null) options.namespace = namespace
  if (cluster !== undefined) options.cluster = cluster
  const allowEviction = booleanParam(parsed, 'allowEviction')
  if (allowEviction !== undefined) options.allowEviction = allowEviction
  for (const name of REDIS_URL_PARAMS) parsed.searchParams.delete(name)
  options.url = parsed.toString()
  return options
}

/** The query parameters of a URL, by name. */
function urlParams(url: string): Record<string, string> {
  try {
    return Object.fromEntries(new URL(url).searchParams)
  } catch {
    throw new ValidationError('invalid_option', 'url', 'is not a valid redis:// URL')
  }
}

/** A `true`/`false` query parameter of a store URL; undefined when absent. */
function booleanParam(url: URL, name: string): boolean | undefined {
  const value = url.searchParams.get(name)
  if (value === null) return undefined
  if (value !== 'true' && value !== 'false') {
    throw new ValidationError('invalid_option', name, `must be true or false (got ${JSON.stringify(value)})`)
  }
  return value === 'true'
}

/** The node a cluster client starts from. A cluster has database 0 only. */
function clusterSeed(url: string): { host: string; port: number } {
  const parsed = new URL(url)
  if (parsed.pathname !== '' && parsed.pathname !== '/' && parsed.pathname !== '/0') {
    throw new ValidationError(
      'invalid_option',
      'url',
      `a Redis Cluster has database 0 only (got ${parsed.pathname})`,
    )
  }
  return { host: parsed.hostname, port: parsed.port === '' ? 6379 : Number(parsed.port) }
}

/** What a cluster client takes from the URL for every node: credentials and TLS. */
function clusterCredentials(url: string): RedisOptions {
  const parsed = new URL(url)
  return {
    ...(parsed.username === '' ? {} : { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password === '' ? {} : { password: decodeURIComponent(parsed.password) }),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  }
}
