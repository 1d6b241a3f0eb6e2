/**
 * Redis's job events (docs/events.md): a stream under the namespace (keys.ts `events`), appended
 * with XADD MAXLEN ~ (so it never outgrows EVENT_RETENTION.maxCount by much) and trimmed by age
 * now and then (XTRIM MINID ~). A waiting subscriber blocks in XREAD on a connection of its own.
 *
 * Gaps: trimming is oldest first, so while the entry of a reader's cursor is still there nothing
 * after it was trimmed; once it is gone, the reader is told of a gap. A subscriber that registers
 * with nobody else registered appends a marker entry ('mark'): no events were kept before it, so
 * a reader whose cursor is older meets the marker and is told of a gap there.
 */
import { Cluster, type Redis } from 'ioredis'

import { assertOpen } from '../kernel/assert-open.js'
import { decodeEvent, encodeEventData } from '../events/event-data.js'
import {
  EVENT_RETENTION,
  type EventChannel,
  type EventRead,
  type JobEvent,
  type JobEventType,
  type NewJobEvent,
} from '../events/job-event.js'
import { PRESENCE_CACHE_MS, PresenceCache } from '../events/presence-cache.js'
import type { RedisKeys } from './keys.js'

const MARK = 'mark'
/** XADD's arguments before an entry's fields: a new id, the stream cut to about its retention. */
const CAPPED_ENTRY = ['MAXLEN', '~', EVENT_RETENTION.maxCount, '*'] as const
const STREAM_ID = /^\d{1,20}-\d{1,20}$/

type StreamEntry = [id: string, fields: string[]]

export class RedisEvents implements EventChannel {
  readonly presenceLagMs = PRESENCE_CACHE_MS
  private readonly presence: PresenceCache
  /** Connections for XREAD BLOCK that no wait is using. */
  private readonly idleReaders: (Redis | Cluster)[] = []
  private readonly readers = new Set<Redis | Cluster>()
  private appendsSinceTrim = 0
  private closed = false

  constructor(
    private readonly redis: Redis | Cluster,
    private readonly keys: RedisKeys,
  ) {
    this.presence = new PresenceCache(
      async () => (await this.redis.zcount(this.keys.eventSubscribers, `(${Date.now()}`, '+inf')) > 0,
    )
  }

  hasSubscribers(): Promise<boolean> {
    this.assertOpen('hasSubscribers')
    return this.presence.get()
  }

  async append(events: readonly NewJobEvent[]): Promise<void> {
    this.assertOpen('append')
    if (events.length === 0) return
    const batch = this.redis.multi()
    for (const event of events) {
      batch.xadd(
        this.keys.events,
        ...CAPPED_ENTRY,
        't',
        event.type,
        'i',
        event.id,
        'q',
        event.queue,
        'n',
        event.name,
        'a',
        String(event.at),
        'd',
        encodeEventData(event) ?? '',
      )
    }
    this.appendsSinceTrim += events.length
    if (this.appendsSinceTrim >= EVENT_RETENTION.trimEvery) {
      this.appendsSinceTrim = 0
      batch.xtrim(this.keys.events, 'MINID', '~', Date.now() - EVENT_RETENTION.maxAgeMs)
    }
    await batch.exec()
  }

  async register(subscriberId: string, ttlMs: number): Promise<string> {
    this.assertOpen('register')
    const now = Date.now()
    const others = await this.redis.zcount(this.keys.eventSubscribers, `(${now}`, '+inf')
    const alone =
      others === 0 ||
      (others === 1 && (await this.redis.zscore(this.keys.eventSubscribers, subscriberId)) !== null)
    let head: string
    if (alone) {
      head = (await this.redis.xadd(this.keys.events, ...CAPPED_ENTRY, 't', MARK))!
    } else {
      const [last] = (await this.redis.xrevrange(this.keys.events, '+', '-', 'COUNT', 1)) as StreamEntry[]
      head = last?.[0] ?? '0-0'
    }
    await this.redis.zadd(this.keys.eventSubscribers, now + ttlMs, subscriberId)
    this.presence.set(true)
    return head
  }

  async unregister(subscriberId: string): Promise<void> {
    if (this.closed) return
    await this.redis
      .multi()
      .zrem(this.keys.eventSubscribers, subscriberId)
      .zremrangebyscore(this.keys.eventSubscribers, '-inf', Date.now())
      .exec()
  }

  async read(cursor: string, limit: number): Promise<EventRead> {
    this.assertOpen('read')
    if (!STREAM_ID.test(cursor)) return this.gap()
    const results = await this.redis
      .multi()
      .xrange(this.keys.events, cursor, cursor)
      .xrange(this.keys.events, `(${cursor}`, '+', 'COUNT', limit)
      .exec()
    const [[, atCursor], [, after]] = results as [[unknown, StreamEntry[]], [unknown, StreamEntry[]]]
    // The cursor's own entry trimmed: later ones may have gone with it.
    if (atCursor.length === 0) return this.gap()
    const events: JobEvent[] = []
    for (const [id, fields] of after) {
      const entry = fieldsOf(fields)
      if (entry.t === MARK) {
        // Nobody subscribed for a while before this marker: what happened then was not kept.
        if (events.length === 0) return { events: [], cursor: id, gap: true }
        break
      }
      events.push(
        decodeEvent(
          id,
          {
            type: entry.t as JobEventType,
            id: entry.i!,
            queue: entry.q!,
            name: entry.n!,
            at: Number(entry.a),
          },
          entry.d === undefined || entry.d === '' ? null : entry.d,
        ),
      )
    }
    return { events, cursor: events.at(-1)?.cursor ?? cursor, gap: false }
  }

  async waitForEvents(cursor: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
    this.assertOpen('waitForEvents')
    if (signal.aborted || !STREAM_ID.test(cursor)) return
    const reader = this.idleReaders.pop() ?? this.newReader()
    const read = reader.xread('BLOCK', Math.max(1, timeoutMs), 'STREAMS', this.keys.events, cursor).then(
      () => {
        if (!this.closed) this.idleReaders.push(reader)
      },
      () => {
        this.readers.delete(reader)
        reader.disconnect()
      },
    )
    let onAbort!: () => void
    const aborted = new Promise<void>((resolve) => {
      onAbort = resolve
      signal.addEventListener('abort', onAbort, { once: true })
    })
    try {
      // On abort the read goes on to its timeout in the background; its connection is idle again then.
      await Promise.race([read, aborted])
    } finally {
      signal.removeEventListener('abort', onAbort)
    }
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    const readers = [...this.readers]
    this.readers.clear()
    this.idleReaders.length = 0
    // A reader blocked in XREAD would hold quit() until its timeout: cut it.
    for (const reader of readers) reader.disconnect()
  }

  private newReader(): Redis | Cluster {
    const reader = this.redis instanceof Cluster ? this.redis.duplicate() : this.redis.duplicate()
    reader.on('error', () => {
      // Reported to the read that fails; a reader that failed is dropped and a new one made.
    })
    this.readers.add(reader)
    return reader
  }

  private async gap(): Promise<EventRead> {
    const [last] = (await this.redis.xrevrange(this.keys.events, '+', '-', 'COUNT', 1)) as StreamEntry[]
    return { events: [], cursor: last?.[0] ?? '0-0', gap: true }
  }

  private assertOpen(operation: string): void {
    assertOpen(this.closed, operation)
  }
}

function fieldsOf(fields: readonly string[]): Record<string, string | undefined> {
  const entry: Record<string, string> = {}
  for (let i = 0; i + 1 < fields.length; i += 2) entry[fields[i]!] = fields[i + 1]!
  return entry
}
