/**
 * The settle's transaction body: one fenced statement per outcome (sql/settle-completed.sql,
 * settle-retry.sql for retries and snoozes, settle-dead.sql), run inside a write transaction of
 * the caller's, which may claim in the same transaction (claim-rows.ts). The completer's hot path:
 * the three statements are prepared once and reused, and each outcome costs one statement, which
 * also writes what its handler reported since the last renewal (progress, logs).
 */
import type { Settlement } from '../../core/outcome.js'
import type { SettleResult } from '../store.js'
import { reportColumns } from '../kernel/job-reports.js'
import type { SqliteConnection } from './sqlite-connection.js'

/**
 * One result per settlement, in input order, and whether any job went back to wait for a run
 * time (then the store re-arms its wake-up for the earliest one).
 */
export function settleRows(
  connection: SqliteConnection,
  settlements: readonly Settlement[],
  at: number,
): { results: SettleResult[]; rescheduled: boolean } {
  const completed = connection.statement('settle-completed')
  const retry = connection.statement('settle-retry')
  const dead = connection.statement('settle-dead')
  let rescheduled = false
  const results = settlements.map((s): SettleResult => {
    let changes: number
    const { progress, logs } = reportColumns(s.report)
    switch (s.kind) {
      case 'completed':
        changes = completed.run({
          id: s.id,
          lease_token: s.leaseToken,
          result: s.result === undefined ? null : JSON.stringify(s.result),
          progress,
          logs,
          now: at,
        }).changes
        break
      case 'retry':
      case 'snoozed':
        changes = retry.run({
          id: s.id,
          lease_token: s.leaseToken,
          state: s.runAt <= at ? 'ready' : 'scheduled',
          run_at: s.runAt,
          last_error: s.kind === 'retry' ? JSON.stringify(s.error) : null,
          attempts_back: s.kind === 'snoozed' ? 1 : 0,
          progress,
          logs,
          now: at,
        }).changes
        rescheduled ||= changes > 0
        break
      case 'dead':
        changes = dead.run({
          id: s.id,
          lease_token: s.leaseToken,
          last_error: JSON.stringify(s.error),
          progress,
          logs,
          now: at,
        }).changes
        break
    }
    return changes === 1 ? 'ok' : 'lease_lost'
  })
  return { results, rescheduled }
}
