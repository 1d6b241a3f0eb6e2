/**
 * The workers' control record on PostgreSQL (Store.control): the stop request, the queue settings
 * (`queues` table, migrations 0012 and 0014) and the schedules version (0015), each statement
 * answering with the record as it left it. What a queue change does to a row is the kernel's (kernel/queue-control.ts); here is
 * how it is written without losing a concurrent change of the same queue.
 */
import {
  changedQueue,
  changeFreesWork,
  queueRowAfter,
  toQueueControls,
  type QueueControlRow,
} from '../kernel/queue-control.js'
import type { ControlParams, ControlRecord } from '../store.js'
import type { PostgresPool, SqlName } from './postgres-pool.js'

/** A row of the control statements (sql/control*.sql): a queue with a setting, or none (queue NULL). */
type ControlRow = { at: string | null; schedules_version: string | null } & (
  QueueControlRow | { [K in keyof QueueControlRow]: null }
)

/**
 * Applies the call's changes (checked before) and reads the record: one round trip without a
 * change, a short transaction for a queue change. The caller wakes this process's waiters.
 */
export async function applyControl(
  db: PostgresPool,
  texts: Record<SqlName, string>,
  params: ControlParams,
): Promise<ControlRecord> {
  const queue = changedQueue(params)
  let rows = queue === null ? null : await changeQueue(db, texts, params, queue)
  if (params.requestStop === true) {
    rows = await db.query<ControlRow>(texts['control-request-stop'], [params.now ?? null])
  }
  rows ??= await db.query<ControlRow>(texts.control, [], 'control')
  const at = rows[0]?.at ?? null
  return {
    stopRequestedAt: at === null ? null : Number(at),
    queues: toQueueControls(rows.filter((row): row is ControlRow & QueueControlRow => row.queue !== null)),
    schedulesVersion: Number(rows[0]?.schedules_version ?? 0),
  }
}

/**
 * A queue change, in a transaction of two statements: the queue's row locked (made if it has
 * none), then written as the kernel works it out, so concurrent changes of one queue each see the
 * one before. A change that may free work wakes the queue's waiters in every process by the NOTIFY
 * of its commit. Claims of a limited queue wait for its row meanwhile (PostgresPool.transaction
 * bounds how long a stalled caller holds it).
 */
async function changeQueue(
  db: PostgresPool,
  texts: Record<SqlName, string>,
  params: ControlParams,
  queue: string,
): Promise<ControlRow[]> {
  return db.transaction(async (client) => {
    const { rows: locked } = await client.query<QueueControlRow & { server_now: string }>(
      texts['control-queue-lock'],
      [queue],
    )
    const { server_now: serverNow, ...current } = locked[0]!
    const after = queueRowAfter(params, queue, current, params.now ?? Number(serverNow))
    const { rows: record } = await client.query<ControlRow>(texts['control-queue-write'], [
      queue,
      after !== null,
      after?.paused_at ?? null,
      after?.paused_by ?? null,
      after?.pause_reason ?? null,
      after?.concurrency ?? null,
      after?.rate_limit ?? null,
      after?.rate_per_ms ?? null,
      after?.group_concurrency ?? null,
      after?.group_rate_limit ?? null,
      after?.group_rate_per_ms ?? null,
      changeFreesWork(params),
      after?.keep_completed_ms ?? null,
      after?.keep_dead_ms ?? null,
      after?.keep_completed_count ?? null,
      after?.keep_dead_count ?? null,
    ])
    return record
  })
}
