/**
 * Job events across processes (docs/events.md): what a subscriber is told, and the channel each
 * store keeps them in. Events are hints over the job row, which stays the truth: a reader who
 * needs a job's state reads the job.
 */
import type { JobError, JobId } from '../../core/job.js'

/**
 * - `enqueued`: a job was created (ready, or scheduled for `runAt`)
 * - `started`: an attempt was claimed (`attempt` is its number)
 * - `completed`: the job's handler returned (`result`, unless `resultOmitted`)
 * - `failed`: an attempt failed and the job will run again at `runAt` (`error`)
 * - `dead`: the job ended without completing (`error`: why, its kind 'expired' for a start
 *   deadline missed)
 * - `cancelled`: an operator ended the job
 * - `retried`: a dead job was put back to run again
 * - `snoozed`: an attempt asked to run again at `runAt`, not counted
 * - `progress`: a running attempt reported `progress` (ctx.progress), as its lease renewal or its
 *   settlement took it
 */
export type JobEventType =
  'enqueued' | 'started' | 'progress' | 'completed' | 'failed' | 'dead' | 'cancelled' | 'retried' | 'snoozed'

export const JOB_EVENT_TYPES: readonly JobEventType[] = [
  'enqueued',
  'started',
  'progress',
  'completed',
  'failed',
  'dead',
  'cancelled',
  'retried',
  'snoozed',
]

/** An event before it is stored: what the publisher appends. */
export interface NewJobEvent {
  type: JobEventType
  id: JobId
  queue: string
  name: string
  /** Epoch ms, the publisher's clock. */
  at: number
  attempt?: number
  runAt?: number
  result?: unknown
  /** True when the result was too large to carry (RESULT_MAX_BYTES): read it from the job. */
  resultOmitted?: true
  error?: JobError
  /** The value ctx.progress reported (at most PROGRESS_MAX_BYTES of JSON). */
  progress?: unknown
}

/** An event as stored: with the cursor a subscriber resumes after. */
export interface JobEvent extends NewJobEvent {
  /** Opaque and ordered within one store: pass it back to resume after this event. */
  cursor: string
}

/**
 * The largest result an event carries, in bytes of JSON: PostgreSQL's NOTIFY payload is at most
 * 8000 bytes, and an event is a hint, not a second copy of the job.
 */
export const RESULT_MAX_BYTES = 4000

/** How long a subscriber's registration lasts unless renewed; it renews at a third of this. */
export const SUBSCRIBER_TTL_MS = 30_000

/**
 * What a store keeps: events older than this, or beyond this many, are trimmed, by the appender
 * once every `trimEvery` events it appends.
 */
export const EVENT_RETENTION = { maxAgeMs: 60 * 60 * 1000, maxCount: 100_000, trimEvery: 1000 }

/** One read of the event log after a cursor. */
export interface EventRead {
  events: JobEvent[]
  /** Where the next read starts: the last event's cursor, or the cursor read after when none. */
  cursor: string
  /**
   * True when events after the cursor asked for are no longer all kept (trimmed, or written
   * while nobody subscribed): the reader must resync from the job rows. `cursor` is then the
   * log's head, and `events` empty.
   */
  gap: boolean
}

/**
 * A store's event log, opened by the store on first use (EVENT_CHANNEL) and closed with it. The
 * publisher appends only while someone is registered, so a store nobody watches pays one cheap
 * presence check per transition call and writes nothing.
 */
export interface EventChannel {
  /**
   * How long after a registration every writer is sure to know of it (writers that cache whether
   * anyone subscribes): subscribe() waits this long before it resolves. 0 where writers ask the
   * store every time (SQLite).
   */
  readonly presenceLagMs: number
  /** Whether any subscriber is registered (and not expired). */
  hasSubscribers(): Promise<boolean>
  append(events: readonly NewJobEvent[]): Promise<void>
  /**
   * Registers (or renews) a subscriber for ttlMs. Returns the log's head cursor as of the
   * registration: events after it are kept for this subscriber.
   */
  register(subscriberId: string, ttlMs: number): Promise<string>
  unregister(subscriberId: string): Promise<void>
  /** Up to `limit` events after `cursor`, oldest first. */
  read(cursor: string, limit: number): Promise<EventRead>
  /**
   * Resolves when events may have been appended after `cursor` (by any process), or when the
   * timeout or the signal ends the wait; never a busy poll.
   */
  waitForEvents(cursor: string, timeoutMs: number, signal: AbortSignal): Promise<void>
}

/** The method a store that keeps job events offers, under a symbol: not part of the Store contract. */
export const EVENT_CHANNEL = Symbol.for('ferry.eventChannel')

export interface EventSource {
  [EVENT_CHANNEL](): EventChannel
}

export function eventChannelOf(store: object): EventChannel | null {
  const source = store as Partial<EventSource>
  return typeof source[EVENT_CHANNEL] === 'function' ? source[EVENT_CHANNEL]() : null
}
