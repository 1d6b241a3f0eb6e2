/**
 * The claim's transaction body, shared by claim() and settle()'s claim: due scheduled jobs become
 * ready, then the next ready ones are read queue by queue and leased all at once (sql/claim.sql).
 * Queue control is read in the same transaction (sql/queue-control-list.sql): a paused queue gives
 * nothing, a limited one no more than its room (live leases under its concurrency, starts left
 * in its rate's window), and the rest comes from the next queues. In a queue, jobs without a group
 * are read name by name (sql/claim-next-named.sql; a claim without names asks for every name with
 * ready jobs, sql/claim-ready-names.sql) and merged; when the queue also has grouped jobs, the claim
 * goes round the groups instead (claim-groups.ts). It runs inside a write transaction of the
 * caller's, on every busy worker's step: its statements are prepared once and reused, and its cost
 * is the jobs it takes, not the backlog.
 */
import type { ClaimParams } from '../store.js'
import { newLeaseTokenBase } from '../kernel/lease-tokens.js'
import { EXPIRED_ERROR, type JobRow } from '../kernel/jobs.js'
import {
  claimLimitsOf,
  windowAllows,
  windowOpensAfter,
  type ClaimLimits,
  type QueueControlRow,
} from '../kernel/queue-control.js'
import { pickRoundTheGroups, type Picked } from './claim-groups.js'
import { nextIdsNamed, readyNames } from './claim-ungrouped.js'
import type { SqliteConnection } from './sqlite-connection.js'

/** The rows leased, in claim order. */
export function claimRows(
  connection: SqliteConnection,
  { queues, names, limit, leaseMs, workerId }: ClaimParams,
  at: number,
): JobRow<number>[] {
  expireJobs(connection, at, EXPIRE_PER_CLAIM)
  connection.statement('claim-promote-due').run({ now: at })
  const controls = queueControls(connection)
  const picked: Picked[] = []
  const counted: [string, ClaimLimits][] = []
  for (const queue of queues) {
    const wanted = limit - picked.length
    if (wanted <= 0) break
    const limits = controls?.get(queue)
    if (limits?.rate != null || limits?.groupRate != null) counted.push([queue, limits])
    for (const pick of pickFromQueue(connection, queue, names, wanted, limits, at)) picked.push(pick)
  }
  if (picked.length === 0) return []
  const ids = picked.map((pick) => pick.id)
  const leased = connection.statement('claim').all({
    ids: JSON.stringify(ids),
    token_base: newLeaseTokenBase(),
    lease_expires_at: at + leaseMs,
    worker_id: workerId,
    now: at,
  }) as JobRow<number>[]
  for (const [queue, limits] of counted) recordStarts(connection, queue, limits, leased, at)
  // RETURNING gives no order: restore the claim order.
  const position = new Map(ids.map((id, i) => [id, i]))
  return leased.sort((a, b) => position.get(a.id)! - position.get(b.id)!)
}

/**
 * Jobs past their start deadline that a claim ends before it picks. More are left for the next
 * claim (or the recoverer's sweep); the claim's own update skips them meanwhile.
 */
const EXPIRE_PER_CLAIM = 1000
const EXPIRED_ERROR_JSON = JSON.stringify(EXPIRED_ERROR)

/** Ends, as dead with cause 'expired', up to `limit` jobs not started by their start deadline; their ids. */
export function expireJobs(connection: SqliteConnection, at: number, limit: number): number[] {
  // The usual answer, none, from a seek of about 1 µs: the UPDATE … RETURNING costs some 50 µs even
  // when it changes nothing, which was most of a claim's added cost (an interleaved probe).
  if (connection.statement('find-expired-start-deadline').get({ now: at }) === undefined) return []
  return connection
    .statement('claim-expire')
    .pluck()
    .all({ now: at, last_error: EXPIRED_ERROR_JSON, limit }) as number[]
}

/** The queues with a setting, by name; null when none has one (the usual case, read as one empty scan). */
function queueControls(connection: SqliteConnection): Map<string, ClaimLimits> | null {
  const rows = connection.statement('queue-control-list').all() as QueueControlRow[]
  return rows.length === 0 ? null : new Map(rows.map((row) => [row.queue, claimLimitsOf(row)]))
}

/**
 * The next jobs of one queue, at most `wanted` and no more than its limits leave room for, in
 * claim order. A rate that holds back a job the queue has ready leaves, on the queue's row, when
 * its window next lets one start (sql/claim-rate-opens.sql), for the timer of the workers that
 * then wait.
 */
function pickFromQueue(
  connection: SqliteConnection,
  queue: string,
  names: readonly string[] | undefined,
  wanted: number,
  limits: ClaimLimits | undefined,
  at: number,
): Picked[] {
  const rated = limits?.rate != null || limits?.groupRate != null
  if (limits?.paused === true) {
    if (rated) connection.statement('claim-rate-opens').run({ queue, at: null })
    return []
  }
  let room = wanted
  let opensAt: number | null = null
  let counted: number[] = []
  if (limits?.concurrency != null) {
    const live = connection.statement('claim-live-leases').pluck().get({ queue, now: at }) as number
    room = Math.min(room, limits.concurrency - live)
  }
  if (limits?.rate != null) {
    counted = queueStarts(connection, queue, limits.rate.perMs, limits.rate.limit, at)
    room = Math.min(room, windowAllows(limits.rate, counted))
  }
  let picked: Picked[] = []
  if (room > 0) {
    const firstGroup = connection.statement('claim-next-group').pluck().get({ queue, after: '' }) as
      string | undefined
    if (firstGroup === undefined) {
      const ids = nextIdsNamed(connection, queue, names ?? readyNames(connection, queue), room)
      picked = ids.map((id) => ({ id, group: null }))
    } else {
      const round = pickRoundTheGroups(connection, queue, names, room, limits, at)
      picked = round.picked
      opensAt = min(opensAt, round.opensAt)
    }
  }
  // The window as this claim leaves it: full, it holds back what the queue has left.
  if (limits?.rate != null) opensAt = min(opensAt, windowOpensAfter(limits.rate, counted, picked.length, at))
  // Held back only if the queue had more to give than was taken: a rate with nothing waiting
  // behind it sets no timer.
  if (rated) {
    const heldBack =
      opensAt !== null && picked.length < wanted && hasReadyJob(connection, queue, names, picked.length)
    connection.statement('claim-rate-opens').run({ queue, at: heldBack ? opensAt : null })
  }
  return picked
}

/** The earlier of two times, either of which may be unknown. */
function min(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b)
}

/** The starts a queue's window counts at `at`, newest first, at most `limit`. */
function queueStarts(
  connection: SqliteConnection,
  queue: string,
  perMs: number,
  limit: number,
  at: number,
): number[] {
  return connection
    .statement('claim-queue-starts')
    .pluck()
    .all({ queue, since: at - perMs, limit }) as number[]
}

/** Whether the queue has a ready job (of these names) beyond the `taken` this claim took. */
function hasReadyJob(
  connection: SqliteConnection,
  queue: string,
  names: readonly string[] | undefined,
  taken: number,
): boolean {
  if (nextIdsNamed(connection, queue, names ?? readyNames(connection, queue), taken + 1).length > taken)
    return true
  return connection.statement('claim-next-group').pluck().get({ queue, after: '' }) !== undefined
}

/** Each leased job of a rate-limited queue starts now in its windows; starts no window counts are forgotten. */
function recordStarts(
  connection: SqliteConnection,
  queue: string,
  limits: ClaimLimits,
  leased: readonly JobRow<number>[],
  at: number,
): void {
  const record = connection.statement('claim-record-start')
  for (const row of leased) {
    if (row.queue === queue)
      record.run({ queue, started_at: at, job_id: row.id, group_key: row.group_key ?? '' })
  }
  const longest = Math.max(limits.rate?.perMs ?? 0, limits.groupRate?.perMs ?? 0)
  connection.statement('claim-prune-starts').run({ queue, before: at - longest })
}
