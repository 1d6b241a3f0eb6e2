import { ValidationError } from '../../core/errors.js'

/** A namespace: the part of every key that keeps one Ferry's data apart from another's. */
export const NAMESPACE_PATTERN = /^[A-Za-z0-9._-]{1,64}$/
export const DEFAULT_NAMESPACE = 'default'

/**
 * Every Redis key name of one Ferry namespace, and the only place they are spelled. All share the
 * hash tag `{namespace}`, so they live in one slot and the scripts work on Redis Cluster. The
 * scripts get `root` and form the names of `scriptKeys` and `scriptPrefixes` from it themselves,
 * in that order (lua/lib/prelude.lua; tests/store/redis-keys.test.ts checks that both agree); they
 * only ever append an id or a queue name to a prefix, or to the ready prefix a queue name, a space
 * and a job name (a queue's ready jobs of one name: ready_name_key).
 *
 * Keys are added with a new key layout (redis-scripts.ts KEY_LAYOUTS, lua/migrate.lua), so that an
 * earlier Ferry refuses a namespace it would not keep whole. Layout 5 (0005_schedules) adds the
 * schedules (`schedules`, `schedules-version`, `schedule:<id>`) and a job's meta field ('m'):
 * nothing to move (a namespace of layout 4 has no schedule, and a job without 'm' has no meta), but
 * a process of layout 4 would run jobs without their own backoff and fire no schedule.
 */
export interface RedisKeys {
  readonly namespace: string
  /** The start of every key name of the namespace: every script's ARGV 1 (prelude.lua's ROOT). */
  readonly root: string
  /** The keys every script names, in prelude.lua's order (KEYS 1 is the first: the id counter). */
  readonly scriptKeys: readonly string[]
  /** The key prefixes every script forms, in prelude.lua's order, then the wake channel. */
  readonly scriptPrefixes: readonly string[]
  /** The shard channel (SPUBLISH) for wake-ups: under the namespace's hash tag, on its node. */
  readonly channel: string
  /** The shard channel on which one store instance (one process, usually) is handed jobs. */
  deliveryChannel(instance: string): string
  readonly stop: string
  readonly schema: string
  /**
   * The namespace's instance marker (a random id written once, at migrate): every script checks
   * that it is still the one this store opened, so a server emptied under running workers is seen.
   */
  readonly instance: string
  /** Workers waiting for deliveries right now (lua/lib/deliver.lua). */
  readonly waiters: string
  /** The queues with a queue control setting (a set); each has its hash, queueControl(queue). */
  readonly queueControls: string
  queueControl(queue: string): string
  /** The leases of a queue's active jobs while it has a concurrency limit (zset expiry -> id). */
  leases(queue: string): string
  /** The leases of a group's active jobs while its queue has a group concurrency limit. */
  groupLeases(queue: string, group: string): string
  /** A queue's grouped ready jobs of one group (the same entries as a ready zset). */
  groupReady(queue: string, group: string): string
  /** A queue's groups with ready jobs (zset, score 0: byte order). */
  groups(queue: string): string
  /** The queues with grouped ready jobs (a set). */
  readonly hasGroups: string
  /** The last group each queue's claims served (hash queue -> group, '' for the jobs without one). */
  readonly groupCursors: string
  /** A queue's log of starts while it has a rate or a group rate (zset lease token -> time). */
  starts(queue: string): string
  /** A group's log of starts (as starts). */
  groupStarts(queue: string, group: string): string
  /** The groups of a queue with a log of starts (zset group -> its latest start). */
  startGroups(queue: string): string
  /** The jobs with a start deadline that have not started, of every queue (zset expiresAt -> id). */
  readonly deadlines: string
  /** A queue's dead jobs that were never started by their start deadline (a set of ids), for stats. */
  expired(queue: string): string
  /** The hash of one job. */
  job(id: string): string
  /** The schedules' ids (a zset of score 0, read in byte order); each has its hash, schedule(id). */
  readonly schedules: string
  /** The store's schedules version (a string that every change of a schedule INCRs; absent: 0). */
  readonly schedulesVersion: string
  /** The hash of one schedule: kernel/schedules.ts's columns, each absent when null. */
  schedule(id: string): string
  /** The finished jobs with their own keepForMs, of every queue (zset finishedAt + keepForMs -> id). */
  readonly kept: string
  /** A queue's finished jobs of one state with their own keepForMs (zset finishedAt -> id). */
  keptOf(queue: string, state: 'completed' | 'dead'): string
  /**
   * The job event log (a stream, trimmed to EVENT_RETENTION; redis-events.ts) and its subscribers
   * (zset id -> expiry). Plain commands use them, never a script: no key layout of their own.
   */
  readonly events: string
  readonly eventSubscribers: string
  /** The running workers' records (hash worker id -> JSON) and their expiries (zset expiresAt -> id). */
  readonly workers: string
  readonly workerExpiries: string
  /** The minutes that have counts (zset minute -> minute), each with its hash, throughput(minute). */
  readonly throughputMinutes: string
  /** One minute's counts (hash 'c <queue>' / 'f <queue>' -> count), by the minute's epoch ms. */
  throughput(minute: number): string
  /** Every key of the namespace, for SCAN MATCH (tests clean up with it). */
  readonly pattern: string
}

export function redisKeys(namespace: string = DEFAULT_NAMESPACE): RedisKeys {
  if (typeof namespace !== 'string' || !NAMESPACE_PATTERN.test(namespace)) {
    throw new ValidationError(
      'invalid_option',
      'namespace',
      `must match ${NAMESPACE_PATTERN.source} (got ${JSON.stringify(namespace)})`,
    )
  }
  const root = `ferry:{${namespace}}:`
  const key = (name: string): string => root + name
  const jobPrefix = key('job:')
  return {
    namespace,
    root,
    scriptKeys: [
      key('id'),
      key('jobs'),
      key('active'),
      key('queues'),
      key('unique'),
      key('stop'),
      key('schema'),
      key('has-ready'),
      key('has-scheduled'),
      key('waiters'),
      key('instance'),
      key('queue-controls'),
      key('deadlines'),
      key('has-groups'),
      key('group-cursors'),
      key('schedules'),
      key('schedules-version'),
      key('kept'),
      key('workers'),
      key('worker-expiries'),
      key('throughput-minutes'),
    ],
    scriptPrefixes: [
      jobPrefix,
      key('ready:'),
      key('scheduled:'),
      key('completed:'),
      key('dead:'),
      key('queue-control:'),
      key('leases:'),
      key('expired:'),
      key('group-ready:'),
      key('groups:'),
      key('starts:'),
      key('start-groups:'),
      key('schedule:'),
      key('kept:'),
      key('throughput:'),
      key('wake'),
    ],
    channel: key('wake'),
    deliveryChannel: (instance) => key(`deliver:${instance}`),
    stop: key('stop'),
    schema: key('schema'),
    instance: key('instance'),
    waiters: key('waiters'),
    queueControls: key('queue-controls'),
    queueControl: (queue) => key(`queue-control:${queue}`),
    leases: (queue) => key(`leases:${queue}`),
    groupLeases: (queue, group) => key(`leases:${queue} ${group}`),
    groupReady: (queue, group) => key(`group-ready:${queue} ${group}`),
    groups: (queue) => key(`groups:${queue}`),
    hasGroups: key('has-groups'),
    groupCursors: key('group-cursors'),
    starts: (queue) => key(`starts:${queue}`),
    groupStarts: (queue, group) => key(`starts:${queue} ${group}`),
    startGroups: (queue) => key(`start-groups:${queue}`),
    deadlines: key('deadlines'),
    expired: (queue) => key(`expired:${queue}`),
    job: (id) => jobPrefix + id,
    schedules: key('schedules'),
    schedulesVersion: key('schedules-version'),
    schedule: (id) => key(`schedule:${id}`),
    kept: key('kept'),
    keptOf: (queue, state) => key(`kept:${queue} ${state}`),
    events: key('events'),
    eventSubscribers: key('event-subscribers'),
    workers: key('workers'),
    workerExpiries: key('worker-expiries'),
    throughputMinutes: key('throughput-minutes'),
    throughput: (minute) => key(`throughput:${minute}`),
    pattern: `ferry:{${namespace}}:*`,
  }
}
