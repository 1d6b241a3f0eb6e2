/**
 * How jobs go into the PostgreSQL store: one job without a unique key as a plain statement
 * (sql/enqueue-one.sql, without a function call's fixed cost: the serial producer's case), a batch
 * as one statement of array parameters (sql/enqueue.sql, or sql/enqueue-joined.sql when its columns
 * join into a few strings), and either inside the caller's own transaction.
 */
import { ValidationError } from '../../core/errors.js'
import type { NewJob } from '../../core/job.js'
import { newLeaseTokenBase } from '../kernel/lease-tokens.js'
import type { EnqueueResult } from '../store.js'
import {
  binaryEnqueueArrays,
  enqueueArrays,
  enqueueOneValues,
  enqueueResults,
  isPlainSingle,
  joinedEnqueueParams,
  plainArrays,
  readyQueuesOf,
  uniqueModeArrays,
} from './postgres-enqueue-arrays.js'
import type { PostgresPool } from './postgres-pool.js'
import type { PostgresWaiting } from './postgres-waiting.js'

/**
 * What a transactional enqueue needs from the caller's connection: pg's Client and PoolClient
 * (inside BEGIN … COMMIT), or anything else with the same `query`.
 */
export interface PostgresQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>
}

/** Enqueues on the store's own pool, then wakes the workers of the queues given ready jobs. */
export async function enqueueJobs(
  db: PostgresPool,
  waiting: PostgresWaiting,
  jobs: readonly NewJob[],
  now: number | undefined,
): Promise<EnqueueResult[]> {
  if (jobs.length === 0) return []
  // A base of lease tokens, for the jobs deliver() hands to waiting workers.
  const tokenBase = newLeaseTokenBase()
  let results: EnqueueResult[]
  if (isPlainSingle(jobs)) {
    const [row] = await db.query<{ id: string }>(
      db.texts['enqueue-one'],
      [...enqueueOneValues(jobs[0]), now ?? null, tokenBase],
      'enqueue-one',
    )
    results = [{ id: row!.id, created: true }]
  } else {
    const joined = joinedEnqueueParams(jobs)
    const name = joined === null ? 'enqueue' : 'enqueue-joined'
    const values =
      joined === null
        ? [...binaryEnqueueArrays(jobs), now ?? null, tokenBase, ...uniqueModeArrays(jobs)]
        : [...joined, now ?? null, tokenBase]
    const [row] = await db.query<{ ids: string; created: string }>(db.texts[name], values, name)
    results = enqueueResults(row!)
  }
  waiting.enqueued(readyQueuesOf(jobs, now))
  return results
}

/**
 * Enqueues with the caller's own connection, inside the caller's transaction: rolled back, no
 * job; committed, the jobs are visible and the workers woken (NOTIFY is delivered on commit).
 * Bypasses group commit, since the caller's transaction is the batch.
 */
export async function enqueueInTransaction(
  db: PostgresPool,
  tx: unknown,
  jobs: readonly NewJob[],
  now: number | undefined,
): Promise<EnqueueResult[]> {
  if (!isQueryable(tx)) {
    throw new ValidationError(
      'invalid_option',
      'tx',
      "must be the pg Client or PoolClient running the caller's transaction (it has no query method)",
    )
  }
  if (jobs.length === 0) return []
  // No delivery: the leases would start while the caller's transaction may stay open long.
  if (isPlainSingle(jobs)) {
    const { rows } = await tx.query(db.texts['enqueue-one'], [
      ...enqueueOneValues(jobs[0]),
      now ?? null,
      null,
    ])
    return [{ id: (rows[0] as { id: string }).id, created: true }]
  }
  const values = [...enqueueArrays(jobs, plainArrays), now ?? null, null, ...uniqueModeArrays(jobs)]
  const { rows } = await tx.query(db.texts.enqueue, values)
  return enqueueResults(rows[0] as { ids: string; created: string })
}

function isQueryable(tx: unknown): tx is PostgresQueryable {
  return typeof tx === 'object' && tx !== null && typeof (tx as PostgresQueryable).query === 'function'
}
