/**
 * waitForWork on Redis: the kernel's Deliveries and WakeHub, fed by the store's subscriber
 * connection, with the server's side of a wait: lua/wait-for-work.lua looks at the waiter's queues
 * once it is subscribed and registers it for delivery in the same script, an enqueue claims jobs
 * for it and publishes them on this store's delivery channel (lua/lib/deliver.lua), lua/wait-for-work-end.lua
 * takes a registration out, and jobs that came too late go back in line with a settle.
 */
import { Cluster, type Redis } from 'ioredis'
import { randomBytes } from 'node:crypto'

import type { ClaimedJob } from '../../core/job.js'
import { isStoreLost } from '../../core/errors.js'
import type { Settlement } from '../../core/outcome.js'
import { Deliveries, type DeliveryBackend, type DeliveryWaiter } from '../kernel/delivery.js'
import { newLeaseTokenBase } from '../kernel/lease-tokens.js'
import type { WaitParams, WaitResult } from '../store.js'
import { WakeHub } from '../wake-hub.js'
import type { RedisKeys } from './keys.js'
import {
  AT,
  decodeDelivery,
  JOB_FIELDS,
  type JobReply,
  settleArgs,
  toClaimedReply,
} from './redis-encoding.js'
import { type RedisScripts, toStoreError } from './redis-scripts.js'

export class RedisWaiting implements DeliveryBackend {
  closed = false
  readonly waitsForWatch = true
  // The safety net covers a message lost with a subscriber connection that went away unnoticed
  // (a cluster node's, a network that dropped it silently).
  private readonly hub = new WakeHub({
    safetyNet: () =>
      // Every name: one look for all the waiters of this store, whatever their names.
      this.checkQueues(this.hub.watchedQueues()).catch((error: unknown) => {
        // The namespace is gone: the waiting workers' next call reports it, and they stop.
        if (isStoreLost(error)) this.hub.broadcast('notified')
      }),
  })
  private readonly deliveries: Deliveries
  /** Where enqueues hand this store's waiters their jobs (lua/lib/deliver.lua). */
  private readonly deliveryChannel: string
  private subscriber: Redis | Cluster | null = null
  private subscribed: Promise<void> | null = null
  /** The stop request waiters last knew of (the stop key's text, null for none), read at open: a
   * different one wakes every waiter, even when its message was published before this store
   * subscribed. Read at the first subscription instead, a stop requested between a worker's first
   * wait and that read was taken as old, and the worker slept through it. */
  private stopSeen: string | null = null
  /** The schedules version waiters last knew of, as control() read it (null before the first read):
   * a change of schedules published before this store subscribed is caught as a stop request is. */
  private schedulesVersionSeen: number | null = null
  /** The server's clock minus ours, from the last script that read TIME. */
  private clockOffsetMs = 0

  constructor(
    private readonly redis: Redis | Cluster,
    private readonly keys: RedisKeys,
    private readonly scripts: RedisScripts,
  ) {
    this.deliveryChannel = keys.deliveryChannel(randomBytes(8).toString('hex'))
    this.deliveries = new Deliveries(this.hub, this, this.deliveryChannel)
  }

  wait(params: WaitParams): Promise<WaitResult> {
    return this.deliveries.wait(params)
  }

  /** The stop key's text (unless `stop` is false) and the schedules version as control() read them. */
  controlRead(stopAt: string | null, schedulesVersion: number, { stop }: { stop: boolean }): void {
    if (stop) this.stopSeen = stopAt
    this.schedulesVersionSeen = schedulesVersion
  }

  /**
   * Takes its waiters' registrations out first, else an enqueue may hand jobs to one of them
   * before the subscriber's connection is seen gone (on a cluster, quit() returns before that);
   * then wakes them with 'aborted'. Jobs handed to a waiter that closing ended are back in line
   * when this resolves.
   */
  async close(): Promise<void> {
    this.closed = true
    const waiters = this.deliveries.waiterIds()
    this.hub.broadcast('aborted')
    if (waiters.length > 0) await this.unregister(waiters).catch(() => {})
    await this.deliveries.givenBack()
    if (this.subscriber !== null) await quit(this.subscriber)
  }

  /** Keeps the server's clock from a script's reply that read TIME (no `now` given). */
  noteServerTime(serverNow: number, givenNow: number | undefined): void {
    if (givenNow === undefined) this.clockOffsetMs = serverNow - Date.now()
  }

  private serverNow(): number {
    return Date.now() + this.clockOffsetMs
  }

  // ── the kernel's DeliveryBackend ───────────────────────────────────────────────────────────

  /**
   * Subscribes, then looks at the queues once and registers the waiter for deliveries (one
   * script): whatever is published from now on wakes it, and what came before (between the
   * worker's empty claim and now, or before the subscription) is found here. A wait that ended
   * while subscribing (a short timeout, an abort) is not registered: its unregister may have gone
   * already.
   */
  async watch(
    queues: readonly string[],
    names: readonly string[] | undefined,
    waiter: DeliveryWaiter | null,
    stillWaiting: () => boolean,
  ): Promise<boolean> {
    await this.subscribe()
    if (waiter === null) {
      await this.checkQueues(queues, names)
      return false
    }
    if (!stillWaiting()) return false
    const registration = JSON.stringify({
      c: this.deliveryChannel,
      l: waiter.limit,
      m: waiter.leaseMs,
      w: waiter.workerId,
      t: newLeaseTokenBase(),
      q: queues,
      n: names,
    })
    return this.checkQueues(queues, names, waiter.id, registration)
  }

  unregister(ids: readonly string[]): Promise<unknown> {
    return this.scripts.run('wait-for-work-end', undefined, ids)
  }

  /** Jobs delivered by id, as they are now; one that is no longer active (cancelled) is left out. */
  async readDelivered(ids: readonly string[]): Promise<ClaimedJob[]> {
    const pipeline = this.redis.pipeline()
    for (const id of ids) pipeline.call('HMGET', this.keys.job(id), ...JOB_FIELDS)
    const replies = (await pipeline.exec()) ?? []
    const jobs: ClaimedJob[] = []
    replies.forEach(([error, fields], i) => {
      const reply = [ids[i]!, ...(fields as JobReply)]
      if (error === null && reply[AT.s!] === 'active') jobs.push(toClaimedReply(reply))
    })
    return jobs
  }

  /** Settled back in line, the attempt unused; the settle's wake-ups are the server's (settle.lua). */
  giveBack(settlements: Settlement[]): Promise<unknown> {
    return this.scripts.run('settle', undefined, settleArgs(settlements).args)
  }

  // ── waking up ──────────────────────────────────────────────────────────────────────────────

  /**
   * Looks at these queues once (lua/wait-for-work.lua), registering a waiter for deliveries when given
   * one (and says whether it did): wakes the waiters if work is waiting there, a new stop was requested or schedules changed, else arms the
   * timer for the next due job.
   */
  private async checkQueues(
    queues: readonly string[],
    names: readonly string[] = [],
    waiterId = '',
    registration = '',
  ): Promise<boolean> {
    const [serverNow, waiting, nextDue, schedulesVersion, stopAt = null] = (await this.scripts.run(
      'wait-for-work',
      undefined,
      [waiterId, registration, String(names.length), ...names, ...queues],
    )) as [number, number, string, string, (string | null)?]
    this.noteServerTime(serverNow, undefined)
    const version = Number(schedulesVersion)
    const schedulesChanged = this.schedulesVersionSeen !== null && version !== this.schedulesVersionSeen
    if (stopAt !== this.stopSeen || schedulesChanged) {
      this.stopSeen = stopAt
      this.schedulesVersionSeen = version
      this.hub.broadcast('notified')
    } else if (waiting === 1) this.hub.broadcast('notified')
    else if (nextDue !== '') this.hub.armDue(Number(nextDue), this.serverNow())
    return waiting === 0
  }

  private subscribe(): Promise<void> {
    if (this.subscribed === null) {
      // Wake-ups and deliveries come on shard channels (lua/lib/prelude.lua, lua/lib/deliver.lua): on a
      // cluster, ioredis subscribes to them on the node that owns the namespace's slot, and
      // follows the slot if it moves.
      const subscriber =
        this.redis instanceof Cluster
          ? this.redis.duplicate(undefined, { lazyConnect: true, shardedSubscribers: true })
          : this.redis.duplicate({ lazyConnect: true })
      this.subscriber = subscriber
      subscriber.on('error', () => {})
      subscriber.on('smessage', (channel: string, message: string) => {
        if (channel !== this.deliveryChannel) this.onWake(message)
        else {
          const delivery = decodeDelivery(message)
          if (delivery !== null) this.deliveries.deliver(delivery)
        }
      })
      // Subscribed again after the first time, every waiter looks again: messages sent meanwhile
      // are lost (and on a cluster, so are the waiters' registrations on a master that died:
      // lua/wait-for-work.lua does not replicate them). On one server, that is the 'ready' of a
      // connection back after a drop (ioredis subscribes again by itself). On a cluster, a failover
      // or a slot move gives the slot's shard subscriber a new node without a 'ready': ioredis says
      // 'subscribersReady' once it has subscribed there, and a worker that waited through a
      // failover slept on (30 s, the safety net) when the first enqueue on the new master came
      // before that.
      let subscribedOnce = false
      const resubscribed = (): void => {
        if (subscribedOnce) this.hub.broadcast('notified')
      }
      subscriber.on('ready', resubscribed)
      if (subscriber instanceof Cluster) subscriber.on('subscribersReady', resubscribed)
      // A stop requested before the subscription is seen by waitForWork's check, one requested
      // after it arrives as a message.
      this.subscribed = subscriber
        .connect()
        .then(() => subscriber.ssubscribe(this.keys.channel, this.deliveryChannel))
        .then(() => {
          subscribedOnce = true
        })
        .catch((error: unknown) => {
          this.subscribed = null
          this.subscriber = null
          subscriber.disconnect()
          throw toStoreError(error, 'waitForWork', this.keys)
        })
    }
    return this.subscribed
  }

  private onWake(message: string): void {
    switch (message[0]) {
      case 'r':
        this.hub.notify([message.slice(1)])
        break
      case 's': {
        const space = message.indexOf(' ')
        if (this.hub.watches(message.slice(space + 1))) {
          this.hub.armDue(Number(message.slice(1, space)), this.serverNow())
        }
        break
      }
      default:
        // 'x' a stop request; 'v' a change of schedules (lua/schedules.lua), which the woken workers'
        // schedulers reload; 'l' a script found the namespace gone (lua/lib/prelude.lua): the woken
        // workers' next call says so, and they stop.
        this.hub.broadcast('notified')
    }
    // A stop request ('x') is read by the woken worker; waitForWork's check need not wake again.
    if (message === 'x')
      void this.redis.get(this.keys.stop).then(
        (at) => (this.stopSeen = at),
        () => {},
      )
  }
}

export async function quit(redis: Redis | Cluster): Promise<void> {
  if (redis.status === 'ready') {
    try {
      await redis.quit()
      return
    } catch {
      // fall through: close the socket anyway
    }
  }
  redis.disconnect()
}
