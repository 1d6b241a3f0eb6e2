/**
 * Queue control's record, one row per queue with a setting, kept alike by every store: what a
 * control call's queue change (pause, resume, limit) does to a queue's row, and how a row reads
 * back as a QueueControl. The stores keep the rows (a table, or a hash per queue) and enforce them
 * inside their claims; the arithmetic of a change is written once, here.
 */
import type { ControlParams, QueueControl, QueueRetention, RateLimit } from '../store.js'
import { keepMsFromColumn, keepMsToColumn } from './retention.js'

/** A queue's settings as a store keeps them: snake_case columns, numbers possibly as text. */
export interface QueueControlRow {
  queue: string
  paused_at: number | string | null
  paused_by: string | null
  pause_reason: string | null
  concurrency: number | string | null
  rate_limit: number | string | null
  rate_per_ms: number | string | null
  group_concurrency: number | string | null
  group_rate_limit: number | string | null
  group_rate_per_ms: number | string | null
  /** Retention ages in ms (-1: forever: kernel/retention.ts) and counts; null: the default. */
  keep_completed_ms: number | string | null
  keep_dead_ms: number | string | null
  keep_completed_count: number | string | null
  keep_dead_count: number | string | null
}

/** The limit columns of a row: what `limit` changes, and what `clear` empties. */
const LIMIT_COLUMNS = [
  'concurrency',
  'rate_limit',
  'rate_per_ms',
  'group_concurrency',
  'group_rate_limit',
  'group_rate_per_ms',
] as const satisfies readonly (keyof QueueControlRow)[]

/** The retention columns of a row: what `retention` changes, and what its `clear` empties. */
const RETENTION_COLUMNS = [
  'keep_completed_ms',
  'keep_dead_ms',
  'keep_completed_count',
  'keep_dead_count',
] as const satisfies readonly (keyof QueueControlRow)[]

/** Every column of a row but its queue, in one order, for a store that lists them (Redis's reply). */
export const QUEUE_CONTROL_COLUMNS = [
  'paused_at',
  'paused_by',
  'pause_reason',
  ...LIMIT_COLUMNS,
  ...RETENTION_COLUMNS,
] as const satisfies readonly Exclude<keyof QueueControlRow, 'queue'>[]

/** The queue a control call changes, or null when it changes none. */
export function changedQueue({ pause, resume, limit, retention }: ControlParams): string | null {
  return (pause ?? resume ?? limit ?? retention)?.queue ?? null
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
  { pause, resume, limit, retention }: ControlParams,
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
    rate_limit: null,
    rate_per_ms: null,
    group_concurrency: null,
    group_rate_limit: null,
    group_rate_per_ms: null,
    keep_completed_ms: null,
    keep_dead_ms: null,
    keep_completed_count: null,
    keep_dead_count: null,
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
    if (limit.clear === true) {
      for (const column of LIMIT_COLUMNS) next[column] = null
    } else {
      if (limit.concurrency !== undefined) next.concurrency = limit.concurrency
      if (limit.groupConcurrency !== undefined) next.group_concurrency = limit.groupConcurrency
      if (limit.rate !== undefined) {
        next.rate_limit = limit.rate?.limit ?? null
        next.rate_per_ms = limit.rate?.perMs ?? null
      }
      if (limit.groupRate !== undefined) {
        next.group_rate_limit = limit.groupRate?.limit ?? null
        next.group_rate_per_ms = limit.groupRate?.perMs ?? null
      }
    }
  }
  if (retention !== undefined) {
    if (retention.clear === true) {
      for (const column of RETENTION_COLUMNS) next[column] = null
    } else {
      if (retention.completedMs !== undefined) next.keep_completed_ms = keepMsToColumn(retention.completedMs)
      if (retention.deadMs !== undefined) next.keep_dead_ms = keepMsToColumn(retention.deadMs)
      if (retention.completedCount !== undefined) next.keep_completed_count = retention.completedCount
      if (retention.deadCount !== undefined) next.keep_dead_count = retention.deadCount
    }
  }
  const unset =
    next.paused_at === null &&
    [...LIMIT_COLUMNS, ...RETENTION_COLUMNS].every((column) => next[column] === null)
  return unset ? null : next
}

export function toQueueControl(row: QueueControlRow): QueueControl {
  return {
    queue: row.queue,
    paused:
      row.paused_at === null
        ? null
        : { at: Number(row.paused_at), by: row.paused_by, reason: row.pause_reason },
    limits: {
      concurrency: numberOrNull(row.concurrency),
      rate: rateOf(row.rate_limit, row.rate_per_ms),
      groupConcurrency: numberOrNull(row.group_concurrency),
      groupRate: rateOf(row.group_rate_limit, row.group_rate_per_ms),
    },
    retention: retentionOf(row),
  }
}

function retentionOf(row: QueueControlRow): QueueRetention {
  return {
    completedMs: keepMsFromColumn(row.keep_completed_ms),
    deadMs: keepMsFromColumn(row.keep_dead_ms),
    completedCount: numberOrNull(row.keep_completed_count),
    deadCount: numberOrNull(row.keep_dead_count),
  }
}

function numberOrNull(value: number | string | null): number | null {
  return value === null ? null : Number(value)
}

function rateOf(limit: number | string | null, perMs: number | string | null): RateLimit | null {
  return limit === null || perMs === null ? null : { limit: Number(limit), perMs: Number(perMs) }
}

/** A queue's limits as a claim reads them from its row, numbers as numbers. */
export interface ClaimLimits {
  paused: boolean
  concurrency: number | null
  rate: RateLimit | null
  groupConcurrency: number | null
  groupRate: RateLimit | null
}

export function claimLimitsOf(row: QueueControlRow): ClaimLimits {
  const { limits } = toQueueControl(row)
  return { paused: row.paused_at !== null, ...limits }
}

/**
 * How many more starts a sliding window allows now, from the starts it counts (those after
 * now - perMs), at most `rate.limit` of them.
 */
export function windowAllows(rate: RateLimit, counted: readonly number[]): number {
  return Math.max(rate.limit - counted.length, 0)
}

/**
 * When a window next lets a job start once this claim's `taken` starts at `at` are in it (those it
 * counted before, newest first, as windowAllows's), or null while it still has room: what a
 * waiting worker's timer is set for when a claim finds the window full, or fills it.
 */
export function windowOpensAfter(
  rate: RateLimit,
  countedNewestFirst: readonly number[],
  taken: number,
  at: number,
): number | null {
  if (taken + countedNewestFirst.length < rate.limit) return null
  const limitth = rate.limit <= taken ? at : countedNewestFirst[rate.limit - taken - 1]!
  return limitth + rate.perMs
}

/** The rows as the record lists them: by queue name. */
export function toQueueControls(rows: readonly QueueControlRow[]): QueueControl[] {
  return rows.map(toQueueControl).sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0))
}
