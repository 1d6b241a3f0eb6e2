import type { NewJob } from '../core/job.js'
import type { EnqueueResult, Store } from '../store/store.js'

interface PendingBatch {
  jobs: readonly NewJob[]
  resolve: (results: EnqueueResult[]) => void
  reject: (error: unknown) => void
}

/**
 * Group commit: every enqueue issued before the event loop turns joins one `Store.enqueue` call,
 * so they share one transaction and one fsync (or one round trip). While a commit is in flight,
 * new enqueues gather for the next one. Each caller's promise settles only with the commit that
 * carried its jobs, so it resolves only once they are durable, and a failed commit rejects every
 * caller in it: none of them was written.
 */
export class GroupCommitter {
  private pending: PendingBatch[] = []
  private scheduled = false
  private inFlight: Promise<void> | null = null

  constructor(private readonly store: Store) {}

  submit(jobs: readonly NewJob[]): Promise<EnqueueResult[]> {
    return new Promise((resolve, reject) => {
      this.pending.push({ jobs, resolve, reject })
      if (!this.scheduled) {
        this.scheduled = true
        setImmediate(() => void this.flush())
      }
    })
  }

  /** Resolves once everything submitted so far is committed or failed. */
  async drain(): Promise<void> {
    while (this.scheduled || this.inFlight !== null) {
      if (this.inFlight !== null) await this.inFlight
      else await new Promise((resolve) => setImmediate(resolve))
    }
  }

  private async flush(): Promise<void> {
    // A commit is running: this batch goes as soon as it ends.
    while (this.inFlight !== null) await this.inFlight
    this.scheduled = false
    const batches = this.pending
    this.pending = []
    if (batches.length === 0) return
    const run = this.commit(batches)
    this.inFlight = run
    try {
      await run
    } finally {
      if (this.inFlight === run) this.inFlight = null
    }
  }

  private async commit(batches: PendingBatch[]): Promise<void> {
    const jobs = batches.length === 1 ? batches[0]!.jobs : batches.flatMap((batch) => batch.jobs)
    let results: EnqueueResult[]
    try {
      results = await this.store.enqueue({ jobs })
    } catch (error) {
      for (const batch of batches) batch.reject(error)
      return
    }
    let offset = 0
    for (const batch of batches) {
      batch.resolve(results.slice(offset, offset + batch.jobs.length))
      offset += batch.jobs.length
    }
  }
}
