/**
 * PostgreSQL's parameters and its delivery's rows, to and from Ferry's jobs (the jobs table's row
 * itself is read by kernel/jobs.ts; an enqueue's parameters are postgres-enqueue-arrays.ts): the
 * array parameters of settle and of the reports (one element per settlement, so a whole batch is
 * one statement), and a delivery's notification payload.
 */
import type { Settlement } from '../../core/outcome.js'
import type { Delivery } from '../kernel/delivery.js'
import { jobIdCheck } from '../kernel/job-ids.js'
import { toClaimedRow, type JobRow } from '../kernel/jobs.js'
import { reportColumns } from '../kernel/job-reports.js'
import type { JobReport } from '../../core/progress.js'
import { foldResults } from '../kernel/settlements.js'
import type { SettleResult } from '../store.js'
/** bigint, kept to 18 digits so that every id that passes is one the column can hold. */
export const isJobId = jobIdCheck(18)

/** settle's array parameters, one element per settlement; they are checked (checkSettlements). */
export function settlementArrays(
  settlements: readonly Settlement[],
): [(string | null)[], string[], string[], (number | null)[], (string | null)[], (string | null)[]] {
  const n = settlements.length
  const ids = new Array<string | null>(n)
  const tokens = new Array<string>(n)
  const kinds = new Array<string>(n)
  const runAts = new Array<number | null>(n)
  const errors = new Array<string | null>(n)
  const results = new Array<string | null>(n)
  for (let i = 0; i < n; i++) {
    const s = settlements[i]!
    // An id that cannot exist matches no row: its item reports 'lease_lost', like a stale one.
    ids[i] = isJobId(s.id) ? s.id : null
    tokens[i] = s.leaseToken
    kinds[i] = s.kind
    runAts[i] = null
    errors[i] = null
    results[i] = null
    switch (s.kind) {
      case 'completed':
        results[i] = s.result === undefined ? null : JSON.stringify(s.result)
        break
      case 'retry':
        runAts[i] = Math.floor(s.runAt)
        errors[i] = JSON.stringify(s.error)
        break
      case 'snoozed':
        runAts[i] = Math.floor(s.runAt)
        break
      case 'dead':
        errors[i] = JSON.stringify(s.error)
        break
    }
  }
  return [ids, tokens, kinds, runAts, errors, results]
}

/**
 * The reports' array parameters of settle and renew (functions/renew.sql): each item's progress
 * and log tail, NULL for unchanged; a NULL array when no item carries one, as nearly always.
 */
export function reportArrays(
  items: readonly { report?: JobReport }[],
): [(string | null)[] | null, (string | null)[] | null] {
  if (!items.some((item) => item.report !== undefined)) return [null, null]
  const columns = items.map((item) => reportColumns(item.report))
  return [columns.map((c) => c.progress), columns.map((c) => c.logs)]
}

/** Per-item results from settle's lost and locked positions (1-based); every other item is settled. */
export function settleResults(
  count: number,
  { lost, locked }: { lost: readonly number[]; locked: readonly number[] },
): SettleResult[] {
  const index = (position: number): number => position - 1
  return foldResults(count, 'ok', [
    ['lease_lost', lost.map(index)],
    ['locked', locked.map(index)],
  ])
}

/**
 * A delivery, as an enqueue sends it on the store's channel (functions/deliver.sql): the waiter's
 * id and its leased rows (as arrays of the jobs columns, bigints as text), or only their ids when
 * the rows would not fit in a notification. Null for a payload it cannot read.
 */
export function decodeDelivery(payload: string): Delivery | null {
  try {
    const message = JSON.parse(payload) as { w?: unknown; jobs?: unknown[][]; ids?: string[] }
    if (typeof message !== 'object' || message === null || typeof message.w !== 'string') return null
    if (message.jobs !== undefined) {
      return { waiterId: message.w, jobs: message.jobs.map((columns) => toClaimedRow(deliveredRow(columns))) }
    }
    return { waiterId: message.w, ids: (message.ids ?? []).filter(isJobId) }
  } catch {
    // Unreadable: its leases run out and recoverExpired puts the jobs back.
    return null
  }
}

/** The columns of a delivered job (functions/deliver.sql), in the table's order, as
 * the row pg would have returned: bigints as text. */
const DELIVERED_COLUMNS = [
  'id',
  'queue',
  'name',
  'payload',
  'state',
  'priority',
  'run_at',
  'attempts',
  'max_attempts',
  'timeout_ms',
  'unique_key',
  'lease_token',
  'lease_expires_at',
  'worker_id',
  'last_error',
  'result',
  'created_at',
  'updated_at',
  'finished_at',
  'group_key',
  'expires_at',
  'meta',
  'progress',
  'logs',
] as const satisfies readonly (keyof JobRow)[]

function deliveredRow(columns: readonly unknown[]): JobRow<string> {
  const row: Record<string, unknown> = {}
  DELIVERED_COLUMNS.forEach((name, i) => (row[name] = columns[i] ?? null))
  return row as unknown as JobRow<string>
}
