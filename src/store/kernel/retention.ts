/**
 * Retention: how long a queue keeps its finished jobs (its control record's retention, or the
 * defaults), and one prune batch walked queue by queue. A SQL store brings only its reads and
 * deletes to pruneBatch; which jobs go, in which order and how many a batch takes is decided
 * here. Redis does the same steps in one script (lua/prune.lua), given RETENTION_DEFAULTS, so
 * that a batch is one round trip there.
 */
import type { PruneResult, QueueControl, QueueRetention } from '../store.js'

/**
 * What a queue keeps without a setting of its own: completed jobs a day (long enough to look at
 * yesterday's runs, short enough that a busy queue's table stays small), dead jobs 14 days (time
 * to notice, fix and retry them after a holiday), and any number of each within those ages.
 */
export const RETENTION_DEFAULTS = {
  completedMs: 86_400_000,
  deadMs: 14 * 86_400_000,
  completedCount: null,
  deadCount: null,
} as const satisfies QueueRetention

export const FINISHED_STATES = ['completed', 'dead'] as const
export type FinishedState = (typeof FINISHED_STATES)[number]

/**
 * An age of Infinity as a column holds it: no integer column (nor a Redis field read with
 * tonumber) holds Infinity, and null already means "the default".
 */
const FOREVER_COLUMN = -1

export function keepMsToColumn(ms: number | null): number | null {
  return ms === Infinity ? FOREVER_COLUMN : ms
}

export function keepMsFromColumn(value: number | string | null): number | null {
  if (value === null) return null
  const ms = Number(value)
  return ms === FOREVER_COLUMN ? Infinity : ms
}

/**
 * A job's own keepForMs of Infinity, as its meta and the stores' keep_for_ms hold it: JSON has no
 * Infinity, and a finish time plus this stays exact in a 64-bit integer and past any date a
 * store will see, so the per-job index needs no case of its own for "forever".
 */
export const KEEP_FOREVER_MS = Number.MAX_SAFE_INTEGER

/** The queues' own retentions, by queue, from the control record's queues. */
export function retentionsOf(controls: readonly QueueControl[]): Map<string, QueueRetention> {
  return new Map(controls.map(({ queue, retention }) => [queue, retention]))
}

/** What one queue keeps of one finished state: an age (Infinity: forever) and a count, or no count. */
export interface StateRetention {
  keepMs: number
  keepCount: number | null
}

export function stateRetention(retention: QueueRetention | undefined, state: FinishedState): StateRetention {
  const keepMs =
    (state === 'completed' ? retention?.completedMs : retention?.deadMs) ?? RETENTION_DEFAULTS[`${state}Ms`]
  const keepCount = (state === 'completed' ? retention?.completedCount : retention?.deadCount) ?? null
  return { keepMs, keepCount }
}

/**
 * A place in a queue's finished jobs of one state, in their order (finish time, then id): prune
 * deletes the jobs before it. Ids are positive, so `{ finishedAt: t, id: 0 }` is "finished before t".
 */
export interface PruneBound {
  finishedAt: number
  id: number | string
}

/** Past any finish time: every job is before it (a count of 0 keeps none). */
const END: PruneBound = { finishedAt: Number.MAX_SAFE_INTEGER, id: 0 }

function isAfter(a: PruneBound, b: PruneBound): boolean {
  return a.finishedAt !== b.finishedAt ? a.finishedAt > b.finishedAt : BigInt(a.id) > BigInt(b.id)
}

/** One queue's finished jobs of one state: what a prune batch walks. */
export interface PruneTarget {
  queue: string
  state: FinishedState
  /** Its oldest job (the first its queue's retention governs): nothing before it, nothing to delete. */
  oldest: PruneBound
}

/** What a store does for a prune batch; each call is its own short transaction or statement. */
export interface PruneSteps {
  /**
   * Deletes up to `limit` jobs whose own keepForMs has run out (finish time + keepForMs at or
   * before `now`), earliest first; returns how many.
   */
  deleteKept(now: number, limit: number): number | Promise<number>
  /**
   * The place of the target's `keep`-th newest job (keep >= 1) counted by the queue's count limit
   * (jobs without their own keepForMs), or null when it has no more than `keep`.
   */
  countBound(target: PruneTarget, keep: number): PruneBound | null | Promise<PruneBound | null>
  /** Deletes up to `limit` of the target's jobs before `bound`, oldest first; returns how many. */
  deleteBefore(target: PruneTarget, bound: PruneBound, limit: number): number | Promise<number>
}

/** What a prune batch reads first, in one read: what it may have to delete. */
export interface PruneCandidates {
  /** The queues with finished jobs, by state, each with its oldest. */
  targets: readonly PruneTarget[]
  /** When the first job with its own keepForMs runs out (finish time + keepForMs), or null for none. */
  keptUntil: number | null
  /** The queues' own retentions. */
  retentions: ReadonlyMap<string, QueueRetention>
}

/**
 * One prune batch: jobs past their own keepForMs first, then each target's jobs past its queue's
 * age or beyond its count (the later of the two bounds), oldest first, until `limit` went. A step
 * with nothing to delete (what was read says so) is not taken: a sweep of a store with nothing
 * past its retention, every worker's usual sweep, writes nothing and takes no write lock.
 */
export async function pruneBatch(
  now: number,
  limit: number,
  { targets, keptUntil, retentions }: PruneCandidates,
  steps: PruneSteps,
): Promise<PruneResult> {
  let deleted = keptUntil !== null && keptUntil <= now ? await steps.deleteKept(now, limit) : 0
  for (const target of targets) {
    if (deleted >= limit) break
    const { keepMs, keepCount } = stateRetention(retentions.get(target.queue), target.state)
    let bound: PruneBound | null = keepMs === Infinity ? null : { finishedAt: now - keepMs + 1, id: 0 }
    if (keepCount !== null) {
      const counted = keepCount === 0 ? END : await steps.countBound(target, keepCount)
      if (counted !== null && (bound === null || isAfter(counted, bound))) bound = counted
    }
    if (bound !== null && isAfter(bound, target.oldest)) {
      deleted += await steps.deleteBefore(target, bound, limit - deleted)
    }
  }
  return { deleted, more: deleted >= limit }
}
