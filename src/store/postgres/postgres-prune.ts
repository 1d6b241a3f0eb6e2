/**
 * One prune batch on PostgreSQL (Store.prune): which jobs a batch deletes, and in what order, is
 * the kernel's (kernel/retention.ts pruneBatch); here are the statements: the candidates read in
 * one round trip beside the queues' retention, each delete a statement of its own that skips rows
 * locked elsewhere (sql/prune*.sql).
 */
import { pruneBatch, retentionsOf, type FinishedState, type PruneCandidates } from '../kernel/retention.js'
import type { PruneResult } from '../store.js'
import { applyControl } from './postgres-control.js'
import type { PostgresPool, SqlName } from './postgres-pool.js'

/** `now`: the call's time, or the server's clock read alongside the candidates. */
export async function pruneJobs(
  db: PostgresPool,
  texts: Record<SqlName, string>,
  now: number | Promise<number>,
  limit: number,
): Promise<PruneResult> {
  type Oldest = { state: FinishedState | null; queue: string; finished_at: string; id: string }
  const [at, rows, { queues }] = await Promise.all([
    now,
    db.query<Oldest & { kept_until: string | null }>(texts['prune-queues'], [], 'prune-queues'),
    // The record read as control() reads it, without what control() tells this process's waiters.
    applyControl(db, texts, {}),
  ])
  const count = async (text: string, values: unknown[]): Promise<number> =>
    (await db.query<{ count: number }>(text, values))[0]!.count
  const candidates: PruneCandidates = {
    targets: rows.flatMap(({ state, queue, finished_at, id }) =>
      state === null ? [] : [{ state, queue, oldest: { finishedAt: Number(finished_at), id } }],
    ),
    keptUntil: rows[0]?.kept_until == null ? null : Number(rows[0].kept_until),
    retentions: retentionsOf(queues),
  }
  return pruneBatch(at, limit, candidates, {
    deleteKept: (upTo, n) => count(texts['prune-kept'], [upTo, n]),
    countBound: async ({ queue, state }, keep) => {
      const [row] = await db.query<{ finished_at: string; id: string }>(texts['prune-count-bound'], [
        state,
        queue,
        keep - 1,
      ])
      return row === undefined ? null : { finishedAt: Number(row.finished_at), id: row.id }
    },
    deleteBefore: ({ queue, state }, bound, n) =>
      count(texts.prune, [state, queue, bound.finishedAt, bound.id, n]),
  })
}
