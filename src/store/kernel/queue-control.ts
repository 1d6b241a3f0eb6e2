/**
 * Queue control's record, one row per queue with a setting, kept alike by every store: what a
 * control call's queue change (pause, resume, limit) does to a queue's row, and how a row reads
 * back as a QueueControl. The stores keep the rows (a table, or a hash per queue) and enforce them
 * inside their claims; the arithmetic of a change is written once, here.
 */
import type { ControlParams, QueueControl } from '../store.js'

/** A queue's settings as a store keeps them: snake_case columns, numbers possibly as text. */
export interface QueueControlRow {
  queue: string
  paused_at: number | string | null
  paused_by: string | null
  pause_reason: string | null
  concurrency: number | string | null
}

/** The queue a control call changes, or null when it changes none. */
export function changedQueue({ pause, resume, limit }: ControlParams): string | null {
  return (pause ?? resume ?? limit)?.queue ?? null
}

/**
 * Whether a change may let waiting workers claim what they could not before, so the store wakes
 * the queue's waiters as an enqueue does: a resume, or a limit raised or removed.
 */
export function changeFreesWork({ resume, limit }: ControlParams): boolean {
  return resume !== undefined || limit !== undefined
}

/**
 * The queue's row after the change (`current`: its row before, null if it had none). Null when the
 * queue is left without any setting: the store deletes its row, so only queues with a setting are
 * listed. Params are checked (store/params.ts checkControlParams) before this runs.
 */
export function queueRowAfter(
  { pause, resume, limit }: ControlParams,
  queue: string,
  current: QueueControlRow | null,
  now: number,
): QueueControlRow | null {
  const row: QueueControlRow = current ?? {
    queue,
    paused_at: null,
    paused_by: null,
    pause_reason: null,
    concurrency: null,
  }
  const next: QueueControlRow = { ...row }
  if (pause !== undefined) {
    next.paused_at = now
    next.paused_by = pause.by ?? null
    next.pause_reason = pause.reason ?? null
  }
  if (resume !== undefined) {
    next.paused_at = null
    next.paused_by = null
    next.pause_reason = null
  }
  if (limit !== undefined) {
    if (limit.clear === true) next.concurrency = null
    else if (limit.concurrency !== undefined) next.concurrency = limit.concurrency
  }
  return next.paused_at === null && next.concurrency === null ? null : next
}

export function toQueueControl(row: QueueControlRow): QueueControl {
  return {
    queue: row.queue,
    paused:
      row.paused_at === null
        ? null
        : { at: Number(row.paused_at), by: row.paused_by, reason: row.pause_reason },
    limits: { concurrency: row.concurrency === null ? null : Number(row.concurrency) },
  }
}

/** The rows as the record lists them: by queue name. */
export function toQueueControls(rows: readonly QueueControlRow[]): QueueControl[] {
  return rows.map(toQueueControl).sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0))
}
