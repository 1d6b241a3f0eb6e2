/**
 * Deleting finished jobs, for purge() and prune(): the chunks of a purge and the steps of a prune
 * batch are the kernel's (kernel/purge.ts, kernel/retention.ts pruneBatch); what is SQLite's here
 * is the statements, each delete in a short write transaction of its own, so claims run between.
 */
import { purgeInChunks } from '../kernel/purge.js'
import { toQueueControls, type QueueControlRow } from '../kernel/queue-control.js'
import { FINISHED_STATES, pruneBatch, retentionsOf } from '../kernel/retention.js'
import type { PruneResult, PurgeParams } from '../store.js'
import type { SqliteConnection } from './sqlite-connection.js'

/** Jobs one purge transaction deletes at most. */
const PURGE_CHUNK = 10_000

/** A purge (checked) in chunks; how many jobs it deleted. */
export function purgeRows(connection: SqliteConnection, params: PurgeParams): Promise<number> {
  const { state, olderThanMs = 0, queue, now } = params
  const finishedBefore = (now ?? Date.now()) - olderThanMs
  return purgeInChunks(PURGE_CHUNK, (limit) => ({
    deleted: deleteFinished(connection, 'purge', {
      state,
      finished_before: finishedBefore,
      queue: queue ?? null,
      limit,
    }),
  }))
}

/** One prune batch (params checked): the candidates read at once, each delete its own transaction. */
export function pruneRows(
  connection: SqliteConnection,
  { now, limit }: { now: number | undefined; limit: number },
): Promise<PruneResult> {
  const queues = connection.statement('prune-queues')
  type Oldest = { queue: string; finished_at: number; id: number }
  const candidates = connection.read(() => ({
    targets: FINISHED_STATES.flatMap((state) =>
      (queues.all({ state }) as Oldest[]).map(({ queue, finished_at, id }) => ({
        queue,
        state,
        oldest: { finishedAt: finished_at, id },
      })),
    ),
    keptUntil: (connection.statement('prune-kept-next').pluck().get() as number | undefined) ?? null,
    retentions: retentionsOf(
      toQueueControls(connection.statement('queue-control-list').all() as QueueControlRow[]),
    ),
  }))
  const countBound = connection.statement('prune-count-bound')
  return pruneBatch(now ?? Date.now(), limit, candidates, {
    deleteKept: (at, upTo) => deleteFinished(connection, 'prune-kept', { now: at, limit: upTo }),
    countBound: ({ queue, state }, keep) => {
      const row = connection.read(() => countBound.get({ state, queue, offset: keep - 1 })) as
        { finished_at: number; id: number } | undefined
      return row === undefined ? null : { finishedAt: row.finished_at, id: row.id }
    },
    deleteBefore: ({ queue, state }, bound, upTo) =>
      deleteFinished(connection, 'prune', {
        state,
        queue,
        before_at: bound.finishedAt,
        before_id: bound.id,
        limit: upTo,
      }),
  })
}

/** One delete statement of finished jobs in its own write transaction; how many it deleted. */
function deleteFinished(
  connection: SqliteConnection,
  name: 'purge' | 'prune' | 'prune-kept',
  params: Record<string, unknown>,
): number {
  return connection.write(() => {
    connection.statement('purge-keep-ids').run()
    return connection.statement(name).run(params).changes
  })
}
