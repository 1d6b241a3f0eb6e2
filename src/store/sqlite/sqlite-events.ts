/**
 * SQLite's job events (docs/events.md): the ferry_events table of migration 0013, in the store's
 * own file, written through the store's connection. A subscriber in another process hears of an
 * append as a worker hears of an enqueue: by the file watch (sqlite-file-watch.ts) and the
 * doorbell the appender rings; one in this process, at once.
 *
 * An append commits without an fsync even under durability 'full' (as a claim does): an event is
 * a hint, the job row it speaks of was made durable by its own commit, and the next synced commit
 * makes the event durable too. So a subscriber costs a serial enqueue one more commit to the WAL,
 * not one more fsync.
 */
import { assertOpen } from '../kernel/assert-open.js'
import { decodeEvent, encodeEventData } from '../events/event-data.js'
import {
  EVENT_RETENTION,
  type EventChannel,
  type EventRead,
  type JobEventType,
  type NewJobEvent,
} from '../events/job-event.js'
import { WakeHub } from '../wake-hub.js'
import type { SqliteConnection } from './sqlite-connection.js'
import { SqliteFileWatch } from './sqlite-file-watch.js'

interface EventRow {
  seq: number
  at: number
  type: JobEventType
  job_id: number
  queue: string
  name: string
  data: string | null
}

export class SqliteEvents implements EventChannel {
  /** Writers ask the table on every transition call: a read of a few µs, no cache. */
  readonly presenceLagMs = 0
  private readonly hub: WakeHub
  private readonly fileWatch: SqliteFileWatch
  private appendsSinceTrim = 0
  private closed = false

  constructor(
    private readonly connection: SqliteConnection,
    path: string,
    /** Rings the store's doorbell: other processes' file watches see the commit. */
    private readonly ring: () => void,
  ) {
    this.fileWatch = new SqliteFileWatch(connection.db, path, connection.file, {
      onChange: () => this.hub.broadcast('notified'),
      onDatabaseFileEvent: () => undefined,
    })
    this.hub = new WakeHub({ onWaitingChange: (waiting) => this.fileWatch.setActive(waiting) })
  }

  async hasSubscribers(): Promise<boolean> {
    this.assertOpen('hasSubscribers')
    return this.connection.read(
      () => this.connection.statement('events-has-subscribers').get(Date.now()) !== undefined,
    )
  }

  async append(events: readonly NewJobEvent[]): Promise<void> {
    this.assertOpen('append')
    if (events.length === 0) return
    const append = this.connection.statement('events-append')
    this.connection.write(
      () => {
        for (const event of events)
          append.run(event.at, event.type, BigInt(event.id), event.queue, event.name, encodeEventData(event))
        this.appendsSinceTrim += events.length
        if (this.appendsSinceTrim >= EVENT_RETENTION.trimEvery) {
          this.appendsSinceTrim = 0
          this.trim(Date.now())
        }
      },
      { sync: false },
    )
    this.hub.broadcast('notified')
    this.ring()
  }

  async register(subscriberId: string, ttlMs: number): Promise<string> {
    this.assertOpen('register')
    return this.connection.write((now) => {
      const statement = (name: Parameters<SqliteConnection['statement']>[0]) =>
        this.connection.statement(name)
      // Nobody else registered: nothing was appended since the last one left, though jobs may have
      // moved. So the log covers only what comes after a new head, and any cursor from before
      // (that of a subscriber resuming) reads as a gap.
      if (statement('events-has-subscribers').get(now) === undefined) {
        statement('events-seq-row').run()
        statement('events-skip-seq').run()
        statement('events-cover-from').run(statement('events-head').pluck().get() as number)
      }
      const head = statement('events-head').pluck().get() as number
      statement('events-register').run(subscriberId, now + ttlMs)
      return String(head)
    })
  }

  async unregister(subscriberId: string): Promise<void> {
    if (this.closed) return
    this.connection.write((now) => this.connection.statement('events-unregister').run(subscriberId, now), {
      sync: false,
    })
  }

  async read(cursor: string, limit: number): Promise<EventRead> {
    this.assertOpen('read')
    const after = Number(cursor)
    return this.connection.read(() => {
      const coveredFrom = this.connection.statement('events-covered-from').pluck().get() as number
      if (!Number.isSafeInteger(after) || after < coveredFrom) {
        const head = this.connection.statement('events-head').pluck().get() as number
        return { events: [], cursor: String(head), gap: true }
      }
      const rows = this.connection.statement('events-read').all(after, limit) as EventRow[]
      const events = rows.map((row) =>
        decodeEvent(
          String(row.seq),
          { type: row.type, id: String(row.job_id), queue: row.queue, name: row.name, at: row.at },
          row.data,
        ),
      )
      return { events, cursor: events.at(-1)?.cursor ?? cursor, gap: false }
    })
  }

  async waitForEvents(cursor: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
    this.assertOpen('waitForEvents')
    const head = this.connection.read(() => this.connection.statement('events-head').pluck().get() as number)
    if (head > Number(cursor)) return
    const waited = this.hub.wait({ queues: [], signal, timeoutMs })
    // A commit between the read above and the watch starting is caught by this check.
    this.fileWatch.check()
    await waited
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    this.hub.broadcast('aborted')
    this.fileWatch.close()
  }

  /** Deletes what retention no longer keeps, inside an append's transaction. */
  private trim(now: number): void {
    const statement = (name: Parameters<SqliteConnection['statement']>[0]) => this.connection.statement(name)
    const head = statement('events-head').pluck().get() as number
    const firstYoung = statement('events-first-young')
      .pluck()
      .get(now - EVENT_RETENTION.maxAgeMs) as number | undefined
    const bound = Math.max(head - EVENT_RETENTION.maxCount, (firstYoung ?? head + 1) - 1)
    if (bound <= 0) return
    statement('events-trim').run(bound)
    statement('events-cover-from').run(bound)
  }

  private assertOpen(operation: string): void {
    assertOpen(this.closed, operation)
  }
}
