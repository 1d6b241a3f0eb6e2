/**
 * PostgreSQL's job events (docs/events.md): the events table of migration 0019 in the store's
 * schema, appended through the store's pool with a NOTIFY of the last seq, which a waiting
 * subscriber hears on a listening connection of its own (opened on its first wait). A NOTIFY is
 * only a wake-up: a notification lost while that connection was down costs latency (the wait's
 * timeout reads the table again), never an event.
 */
import pg from 'pg'

import { assertOpen } from '../kernel/assert-open.js'
import { decodeEvent, encodeEventData } from '../events/event-data.js'
import {
  EVENT_RETENTION,
  type EventChannel,
  type EventRead,
  type JobEventType,
  type NewJobEvent,
} from '../events/job-event.js'
import { PRESENCE_CACHE_MS, PresenceCache } from '../events/presence-cache.js'
import type { PostgresPool } from './postgres-pool.js'

interface EventRow {
  covered_from: string
  head: string
  seq: string | null
  at: string
  type: JobEventType
  job_id: string
  queue: string
  name: string
  data: string | null
}

export class PostgresEvents implements EventChannel {
  readonly presenceLagMs = PRESENCE_CACHE_MS
  private readonly presence: PresenceCache
  private readonly notifyChannel: string
  private listener: pg.Client | null = null
  private listening: Promise<pg.Client> | null = null
  private readonly waiters = new Set<() => void>()
  private appendsSinceTrim = 0
  private closed = false

  constructor(
    private readonly db: PostgresPool,
    private readonly config: pg.ClientConfig,
    schema: string,
  ) {
    this.notifyChannel = `ferry-events:${schema}`
    this.presence = new PresenceCache(async () => {
      const [row] = await this.db.query<{ present: boolean }>(
        this.db.texts['events-has-subscribers'],
        [Date.now()],
        'events-has-subscribers',
      )
      return row?.present ?? false
    })
  }

  hasSubscribers(): Promise<boolean> {
    this.assertOpen('hasSubscribers')
    return this.presence.get()
  }

  async append(events: readonly NewJobEvent[]): Promise<void> {
    this.assertOpen('append')
    if (events.length === 0) return
    await this.db.query(
      this.db.texts['events-append'],
      [
        events.map((e) => e.at),
        events.map((e) => e.type),
        events.map((e) => e.id),
        events.map((e) => e.queue),
        events.map((e) => e.name),
        events.map((e) => encodeEventData(e)),
        this.notifyChannel,
      ],
      'events-append',
    )
    this.appendsSinceTrim += events.length
    if (this.appendsSinceTrim >= EVENT_RETENTION.trimEvery) {
      this.appendsSinceTrim = 0
      await this.db.query(
        this.db.texts['events-trim'],
        [Date.now() - EVENT_RETENTION.maxAgeMs, EVENT_RETENTION.maxCount],
        'events-trim',
      )
    }
  }

  async register(subscriberId: string, ttlMs: number): Promise<string> {
    this.assertOpen('register')
    const now = Date.now()
    const [row] = await this.db.query<{ head: string }>(
      this.db.texts['events-register'],
      [subscriberId, now + ttlMs, now],
      'events-register',
    )
    this.presence.set(true)
    return row!.head
  }

  async unregister(subscriberId: string): Promise<void> {
    if (this.closed) return
    await this.db.query(this.db.texts['events-unregister'], [subscriberId, Date.now()], 'events-unregister')
  }

  async read(cursor: string, limit: number): Promise<EventRead> {
    this.assertOpen('read')
    const after = /^\d{1,19}$/.test(cursor) ? cursor : '-1'
    const rows = await this.db.query<EventRow>(this.db.texts['events-read'], [after, limit], 'events-read')
    const first = rows[0]!
    if (BigInt(after) < BigInt(first.covered_from)) return { events: [], cursor: first.head, gap: true }
    const events = rows
      .filter((row) => row.seq !== null)
      .map((row) =>
        decodeEvent(
          row.seq!,
          { type: row.type, id: row.job_id, queue: row.queue, name: row.name, at: Number(row.at) },
          row.data,
        ),
      )
    return { events, cursor: events.at(-1)?.cursor ?? cursor, gap: false }
  }

  async waitForEvents(cursor: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
    this.assertOpen('waitForEvents')
    if (signal.aborted) return
    let wake!: () => void
    const woken = new Promise<void>((resolve) => (wake = resolve))
    this.waiters.add(wake)
    const timer = setTimeout(wake, timeoutMs)
    signal.addEventListener('abort', wake, { once: true })
    try {
      await this.listen().catch(() => {
        // No listening connection: the timeout reads the table again.
      })
      // An append that committed before LISTEN took effect sent its NOTIFY to nobody.
      const { events, gap } = await this.read(cursor, 1)
      if (events.length > 0 || gap) return
      await woken
    } finally {
      clearTimeout(timer)
      signal.removeEventListener('abort', wake)
      this.waiters.delete(wake)
    }
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const wake of this.waiters) wake()
    const listener = this.listener
    this.listener = null
    await listener?.end().catch(() => undefined)
  }

  /** The listening connection, opened on first need and again after it dropped. */
  private listen(): Promise<pg.Client> {
    this.listening ??= (async () => {
      const client = new pg.Client(this.config)
      client.on('error', () => this.dropListener(client))
      client.on('end', () => this.dropListener(client))
      client.on('notification', () => {
        for (const wake of this.waiters) wake()
      })
      try {
        await client.connect()
        await client.query(`LISTEN "${this.notifyChannel.replaceAll('"', '""')}"`)
      } catch (error) {
        this.dropListener(client)
        await client.end().catch(() => undefined)
        throw error
      }
      if (this.closed) {
        await client.end().catch(() => undefined)
        throw new Error('closed')
      }
      this.listener = client
      return client
    })()
    return this.listening
  }

  private dropListener(client: pg.Client): void {
    if (this.listener === client) this.listener = null
    this.listening = null
    for (const wake of this.waiters) wake()
  }

  private assertOpen(operation: string): void {
    assertOpen(this.closed, operation)
  }
}
