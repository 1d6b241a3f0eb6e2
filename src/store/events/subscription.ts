/**
 * A subscription to job events (docs/events.md): registered in the store before subscribe()
 * resolves, so every event after that point is kept for it; read from the store's log after a
 * cursor, in order; told of a gap, never silently short, when the log no longer holds what
 * follows its cursor.
 */
import { ValidationError } from '../../core/errors.js'
import type { JobId } from '../../core/job.js'
import { assertKnownKeys, optionKeys } from '../../core/option-keys.js'
import type { Store } from '../store.js'
import {
  eventChannelOf,
  JOB_EVENT_TYPES,
  SUBSCRIBER_TTL_MS,
  type EventChannel,
  type JobEvent,
  type JobEventType,
} from './job-event.js'

export interface SubscribeOptions {
  /** Only events of jobs of these queues; default every queue. */
  queues?: readonly string[]
  /** Only events of these jobs. */
  ids?: readonly JobId[]
  /** Only these types of event; default every type. */
  events?: readonly JobEventType[]
  /**
   * Resume after this cursor (an event's, or a subscription's `cursor`): the events after it,
   * or a gap first if the store no longer holds them all. Default: from now.
   */
  cursor?: string
  /** Ends the subscription: its iteration finishes. */
  signal?: AbortSignal
}

/**
 * The log no longer holds every event after the cursor the subscriber was at (trimmed by
 * retention, or written while nobody was subscribed): what happened meanwhile must be read from
 * the jobs themselves. The subscription goes on from `cursor`, the log's head.
 */
export interface EventGap {
  type: 'gap'
  cursor: string
}

const SUBSCRIBE_OPTION_KEYS = optionKeys<SubscribeOptions>({
  queues: true,
  ids: true,
  events: true,
  cursor: true,
  signal: true,
})

/** Events read from the store at a time. */
const READ_BATCH = 500

/**
 * Subscribes to job events of the store, from any process on the same database: resolves once
 * the subscription is registered, so nothing that happens after is missed (read the jobs you
 * care about after it resolves, not before). Iterate it with `for await`; close() or the signal
 * ends it. Throws ValidationError for a store that keeps no events, or bad options.
 */
export async function subscribe(store: Store, options: SubscribeOptions = {}): Promise<JobEventSubscription> {
  assertKnownKeys(options, SUBSCRIBE_OPTION_KEYS, '')
  const channel = eventChannelOf(store)
  if (channel === null) {
    throw new ValidationError('invalid_option', 'store', `the ${store.kind} store keeps no job events`)
  }
  for (const type of options.events ?? []) {
    if (!JOB_EVENT_TYPES.includes(type)) {
      throw new ValidationError(
        'invalid_option',
        'events',
        `unknown event type ${JSON.stringify(type)} (one of ${JOB_EVENT_TYPES.join(', ')})`,
      )
    }
  }
  const subscription = new JobEventSubscription(channel, options)
  await subscription.start()
  // Until every writer knows of the registration, it might write no events: wait that long.
  if (channel.presenceLagMs > 0) await new Promise((resolve) => setTimeout(resolve, channel.presenceLagMs))
  return subscription
}

/**
 * A subscription that starts without waiting for every writer to know of it: for waitFor, which
 * reads the job again every second whatever events say.
 */
export async function subscribeAtOnce(
  store: Store,
  options: SubscribeOptions,
): Promise<JobEventSubscription> {
  const channel = eventChannelOf(store)
  if (channel === null) return subscribe(store, options)
  const subscription = new JobEventSubscription(channel, options)
  await subscription.start()
  return subscription
}

export class JobEventSubscription implements AsyncIterable<JobEvent | EventGap> {
  /** Where the subscription is: the last event it handed out, or where it started. */
  cursor = ''
  private readonly id = `sub-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`
  private readonly stop = new AbortController()
  private readonly queues: ReadonlySet<string> | null
  private readonly ids: ReadonlySet<JobId> | null
  private readonly types: ReadonlySet<JobEventType> | null
  private buffer: (JobEvent | EventGap)[] = []
  private renewedAt = 0
  private closing: Promise<void> | null = null

  constructor(
    private readonly channel: EventChannel,
    private readonly options: SubscribeOptions,
  ) {
    this.queues = options.queues === undefined ? null : new Set(options.queues)
    this.ids = options.ids === undefined ? null : new Set(options.ids)
    this.types = options.events === undefined ? null : new Set(options.events)
    options.signal?.addEventListener('abort', () => void this.close(), { once: true })
  }

  /** @internal Registers, and sets the cursor: the given one, or the log's head. */
  async start(): Promise<void> {
    const head = await this.channel.register(this.id, SUBSCRIBER_TTL_MS)
    this.renewedAt = Date.now()
    this.cursor = this.options.cursor ?? head
  }

  /** The next event (or gap) that matches, waiting for it; null once the subscription ended. */
  async next(): Promise<JobEvent | EventGap | null> {
    try {
      return await this.nextItem()
    } catch (error) {
      // A read cut short by close() (the store closing under it, say) ends the iteration.
      if (this.stop.signal.aborted) return null
      throw error
    }
  }

  private async nextItem(): Promise<JobEvent | EventGap | null> {
    for (;;) {
      const buffered = this.buffer.shift()
      if (buffered !== undefined) {
        this.cursor = buffered.cursor
        return buffered
      }
      if (this.stop.signal.aborted) return null
      await this.renewIfDue()
      const read = await this.channel.read(this.cursor, READ_BATCH)
      if (read.gap) {
        this.buffer.push({ type: 'gap', cursor: read.cursor })
        continue
      }
      this.buffer = read.events.filter((event) => this.matches(event))
      if (read.events.length > 0 && this.buffer.length === 0) {
        // Nothing of ours in this batch: move past it all the same.
        this.cursor = read.cursor
        continue
      }
      if (this.buffer.length > 0) continue
      const untilRenewal = Math.max(0, this.renewedAt + SUBSCRIBER_TTL_MS / 3 - Date.now())
      await this.channel.waitForEvents(this.cursor, untilRenewal, this.stop.signal)
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<JobEvent | EventGap> {
    try {
      for (let item = await this.next(); item !== null; item = await this.next()) yield item
    } finally {
      await this.close()
    }
  }

  /** Ends the subscription and unregisters it. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.stop.abort()
      await this.channel.unregister(this.id).catch(() => undefined)
    })()
    return this.closing
  }

  private matches(event: JobEvent): boolean {
    return (
      (this.queues === null || this.queues.has(event.queue)) &&
      (this.ids === null || this.ids.has(event.id)) &&
      (this.types === null || this.types.has(event.type))
    )
  }

  private async renewIfDue(): Promise<void> {
    if (Date.now() - this.renewedAt < SUBSCRIBER_TTL_MS / 3) return
    await this.channel.register(this.id, SUBSCRIBER_TTL_MS)
    this.renewedAt = Date.now()
  }
}
