/**
 * Bulk actions on every job a filter matches ("all matching"), run in the background by the
 * dashboard's process: runBulkAction (src/admin/bulk.ts) changes them a batch at a time, one store
 * call each with a turn of the event loop between, so 100,000 jobs never hold the store or the
 * workers' claims for long. A page starts one and follows its progress; it can be stopped between
 * two batches. The last few are kept in memory to show how they ended (a restart forgets them; the
 * jobs they changed stay changed).
 */
import { randomBytes } from 'node:crypto'

import { runBulkAction, type BulkAction, type BulkProgress } from '../admin/bulk.js'
import type { ListJobsFilter, Store } from '../store/store.js'

/** Operations kept to show, the running ones and the latest finished. */
const KEPT = 20

export interface Operation {
  id: string
  /** What it does, for people: "retry every dead job of mail". */
  title: string
  action: BulkAction
  filter: ListJobsFilter
  startedAt: number
  finishedAt: number | null
  progress: BulkProgress
  /** 'running', 'done', 'stopped' (by a person), or 'failed' (with `error`). */
  status: 'running' | 'done' | 'stopped' | 'failed'
  error: string | null
}

export class Operations {
  private readonly operations = new Map<string, { operation: Operation; stop: AbortController }>()

  constructor(private readonly store: Store) {}

  start(action: BulkAction, filter: ListJobsFilter, title: string): Operation {
    const stop = new AbortController()
    const operation: Operation = {
      id: randomBytes(6).toString('hex'),
      title,
      action,
      filter,
      startedAt: Date.now(),
      finishedAt: null,
      progress: { matched: 0, done: 0, changed: 0, skipped: 0 },
      status: 'running',
      error: null,
    }
    this.operations.set(operation.id, { operation, stop })
    this.forgetOld()
    runBulkAction(this.store, {
      action,
      filter,
      signal: stop.signal,
      onProgress: (progress) => (operation.progress = { ...progress }),
    }).then(
      (result) => {
        operation.progress = {
          matched: result.matched,
          done: result.done,
          changed: result.changed,
          skipped: result.skipped,
        }
        operation.status = result.stopped ? 'stopped' : 'done'
        operation.finishedAt = Date.now()
      },
      (error: unknown) => {
        operation.status = 'failed'
        operation.error = error instanceof Error ? error.message : String(error)
        operation.finishedAt = Date.now()
      },
    )
    return operation
  }

  /** Asks a running operation to stop after its current batch; false when there is no such operation. */
  stop(id: string): boolean {
    const entry = this.operations.get(id)
    if (entry === undefined) return false
    entry.stop.abort()
    return true
  }

  get(id: string): Operation | null {
    return this.operations.get(id)?.operation ?? null
  }

  /** Newest first. */
  list(): Operation[] {
    return [...this.operations.values()].map(({ operation }) => operation).reverse()
  }

  /** Whether any operation is running (a page showing them then follows their progress). */
  running(): boolean {
    return this.list().some((operation) => operation.status === 'running')
  }

  /** Stops every running operation (the dashboard is closing). */
  stopAll(): void {
    for (const { stop } of this.operations.values()) stop.abort()
  }

  private forgetOld(): void {
    const finished = [...this.operations.values()].filter(({ operation }) => operation.status !== 'running')
    for (const { operation } of finished.slice(0, Math.max(0, this.operations.size - KEPT))) {
      this.operations.delete(operation.id)
    }
  }
}
