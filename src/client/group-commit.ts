import type { NewJob } from '../core/job.js'
import type { EnqueueResult, Store } from '../store/store.js'

/** One caller's jobs: a single job (the common case, kept free of per-call arrays) or a batch. */
type Pending =
  | {
      job: NewJob
      jobs?: undefined
      resolve: (result: EnqueueResult) => void
      reject: (error: unknown) => void
    }
  | { jobs: readonly NewJob[]; resolve: (results: EnqueueResult[]) => void; reject: (error: unknown) => void }

/**
 * Group commit: every enqueue issued before the event loop turns joins one `Store.enqueue` call,
 * so they share one transaction and one fsync (or one round trip). While a commit is in flight,
 * new enqueues gather for the next one. Each caller's promise settles only with the commit that
 * carried its jobs, so it resolves only once they are durable, and a failed commit rejects every
 * caller in it: none of them was written.
 */
export class GroupCommitter {
  private pending: Pending[] = []
  private pendingJobCount = 0
  private scheduled = false
  private inFlight: Promise<void> | null = null

  constructor(private readonly store: Store) {}

  submitOne(job: NewJob): Promise<EnqueueResult> {
    return new Promise((resolve, reject) => this.add({ job, resolve, reject }, 1))
  }

  submit(jobs: readonly NewJob[]): Promise<EnqueueResult[]> {
    return new Promise((resolve, reject) => this.add({ jobs, resolve, reject }, jobs.length))
  }

  /** Resolves once everything submitted so far is committed or failed. */
  async drain(): Promise<void> {
    while (this.scheduled || this.inFlight !== null) {
      if (this.inFlight !== null) await this.inFlight
      else await new Promise((resolve) => setImmediate(resolve))
    }
  }

  private add(entry: Pending, jobCount: number): void {
    this.pending.push(entry)
    this.pendingJobCount += jobCount
    if (!this.scheduled) {
      this.scheduled = true
      setImmediate(() => void this.flush())
    }
  }

  private async flush(): Promise<void> {
    // A commit is running: this batch goes as soon as it ends.
    while (this.inFlight !== null) await this.inFlight
    this.scheduled = false
    const entries = this.pending
    const jobCount = this.pendingJobCount
    this.pending = []
    this.pendingJobCount = 0
    if (entries.length === 0) return
    const run = this.commit(entries, jobCount)
    this.inFlight = run
    try {
      await run
    } finally {
      if (this.inFlight === run) this.inFlight = null
    }
  }

  private async commit(entries: Pending[], jobCount: number): Promise<void> {
    let jobs: readonly NewJob[]
    if (entries.length === 1) {
      const only = entries[0]!
      jobs = only.jobs ?? [only.job]
    } else {
      const all: NewJob[] = new Array(jobCount)
      let i = 0
      for (const entry of entries) {
        if (entry.jobs === undefined) all[i++] = entry.job
        else for (const job of entry.jobs) all[i++] = job
      }
      jobs = all
    }
    let results: EnqueueResult[]
    try {
      results = await this.store.enqueue({ jobs })
    } catch (error) {
      for (const entry of entries) entry.reject(error)
      return
    }
    let offset = 0
    for (const entry of entries) {
      if (entry.jobs === undefined) {
        entry.resolve(results[offset++]!)
      } else {
        entry.resolve(results.slice(offset, offset + entry.jobs.length))
        offset += entry.jobs.length
      }
    }
  }
}
