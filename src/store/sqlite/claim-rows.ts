/**
 * The claim's transaction body, shared by claim() and settle()'s claim: due scheduled jobs become
 * ready, then the next ready ones are read queue by queue, name by name (sql/claim-next-named.sql;
 * a claim without names asks for every name with ready jobs, sql/claim-ready-names.sql), merged,
 * and leased all at once (sql/claim.sql). Queue control is read in the same transaction
 * (sql/queue-control-list.sql): a paused queue gives nothing, a limited one no more than the room its
 * live leases leave, and the rest comes from the next queues. It runs inside a
 * write transaction of the caller's, on every busy worker's step: its statements are prepared once
 * and reused, and its cost is the jobs it takes, not the backlog.
 */
import type { ClaimParams } from '../store.js'
import { newLeaseTokenBase } from '../kernel/lease-tokens.js'
import { EXPIRED_ERROR, type JobRow } from '../kernel/jobs.js'
import type { QueueControlRow } from '../kernel/queue-control.js'
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
  const ids: number[] = []
  for (const queue of queues) {
    const remaining = limit - ids.length
    if (remaining <= 0) break
    const room = controls === null ? remaining : roomIn(connection, controls.get(queue), remaining, at)
    if (room <= 0) continue
    const queueNames = names ?? readyNames(connection, queue)
    for (const id of nextIdsNamed(connection, queue, queueNames, room)) ids.push(id)
  }
  if (ids.length === 0) return []
  const leased = connection.statement('claim').all({
    ids: JSON.stringify(ids),
    token_base: newLeaseTokenBase(),
    lease_expires_at: at + leaseMs,
    worker_id: workerId,
    now: at,
  }) as JobRow<number>[]
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
function queueControls(connection: SqliteConnection): Map<string, QueueControlRow> | null {
  const rows = connection.statement('queue-control-list').all() as QueueControlRow[]
  return rows.length === 0 ? null : new Map(rows.map((row) => [row.queue, row]))
}

/** How many jobs a queue may give this claim, of the `wanted`: none when paused, at most its room. */
function roomIn(
  connection: SqliteConnection,
  control: QueueControlRow | undefined,
  wanted: number,
  at: number,
): number {
  if (control === undefined) return wanted
  if (control.paused_at !== null) return 0
  if (control.concurrency === null) return wanted
  const live = connection
    .statement('claim-live-leases')
    .pluck()
    .get({ queue: control.queue, now: at }) as number
  return Math.min(wanted, Number(control.concurrency) - live)
}

/** The names that have ready jobs in a queue: one index seek each (a skip scan). */
function readyNames(connection: SqliteConnection, queue: string): string[] {
  const nextName = connection.statement('claim-ready-names').pluck()
  const names: string[] = []
  for (let after = ''; ;) {
    const name = nextName.get({ queue, after }) as string | undefined
    if (name === undefined) return names
    names.push(name)
    after = name
  }
}

/**
 * The ids of the next `limit` ready jobs of one queue among these names, in claim order: the
 * first `limit` of each name (one index range each, ferry_jobs_ready_by_name), merged. Jobs of
 * other names cost nothing, however many stand ahead.
 */
function nextIdsNamed(
  connection: SqliteConnection,
  queue: string,
  names: readonly string[],
  limit: number,
): number[] {
  const nextOfName = connection.statement('claim-next-named')
  type Candidate = { id: number; priority: number; run_at: number }
  const candidates: Candidate[] = []
  for (const name of names) {
    for (const row of nextOfName.all({ queue, name, limit }) as Candidate[]) candidates.push(row)
  }
  if (names.length > 1) {
    candidates.sort((a, b) => b.priority - a.priority || a.run_at - b.run_at || a.id - b.id)
  }
  return candidates.slice(0, limit).map((row) => row.id)
}
