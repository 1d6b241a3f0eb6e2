import type { ClaimedJob } from '../core/job.js'
import { appendLogTail, type JobReport } from '../core/progress.js'
import type { AttemptReport } from './executors/executor.js'

/** What a running job's handler reported that the store does not have yet. */
interface Unsent {
  /** The latest progress (JSON text) not yet written; undefined when the store has it. */
  progress: string | undefined
  /** The job's whole log tail: the lines it was claimed with, then this attempt's. */
  logs: string[]
  logsChanged: boolean
  /** Counts reports, so a renewal's success clears only what it carried. */
  version: number
  /** The version the renewal in flight carries, if any. */
  sentVersion: number | null
}

/**
 * Buffers what running handlers report (ctx.progress, ctx.log) until it rides on the job's next
 * lease renewal or its settlement: no store write of its own, and only the latest progress goes.
 * Each report calls `onReport`, which has the lease keeper renew soon (LeaseKeeper.renewSoon).
 */
export class JobReports {
  private readonly unsent = new Map<string, Unsent>()

  constructor(private readonly onReport: () => void) {}

  /** Where an attempt's reports go while `current()` says the attempt still runs (later ones are dropped). */
  reporterFor(job: ClaimedJob, current: () => boolean): AttemptReport {
    return {
      progress: (json) => {
        if (!current()) return
        const unsent = this.entry(job)
        unsent.progress = json
        unsent.version++
        this.onReport()
      },
      log: (line) => {
        if (!current()) return
        const unsent = this.entry(job)
        unsent.logs = appendLogTail(unsent.logs, [line])
        unsent.logsChanged = true
        unsent.version++
        this.onReport()
      },
    }
  }

  /** What a renewal about to be sent carries for this job: its unsent reports, noted as sent. */
  forRenewal(id: string): JobReport | undefined {
    const unsent = this.unsent.get(id)
    if (unsent === undefined || (unsent.progress === undefined && !unsent.logsChanged)) return undefined
    unsent.sentVersion = unsent.version
    return unsentReport(unsent)
  }

  /** The renewal carrying this job's reports renewed its lease: what it carried is written. */
  renewed(id: string): void {
    const unsent = this.unsent.get(id)
    if (unsent === undefined || unsent.sentVersion === null) return
    if (unsent.sentVersion === unsent.version) {
      unsent.progress = undefined
      unsent.logsChanged = false
    }
    unsent.sentVersion = null
  }

  /** What the job's settlement carries: everything not yet written. The job is forgotten. */
  forSettlement(id: string): JobReport | undefined {
    const unsent = this.unsent.get(id)
    this.unsent.delete(id)
    return unsent === undefined ? undefined : unsentReport(unsent)
  }

  /** The job's lease was lost: nothing of it will be written. */
  forget(id: string): void {
    this.unsent.delete(id)
  }

  private entry(job: ClaimedJob): Unsent {
    let unsent = this.unsent.get(job.id)
    if (unsent === undefined) {
      unsent = { progress: undefined, logs: job.logs, logsChanged: false, version: 0, sentVersion: null }
      this.unsent.set(job.id, unsent)
    }
    return unsent
  }
}

function unsentReport({ progress, logs, logsChanged }: Unsent): JobReport | undefined {
  if (progress === undefined && !logsChanged) return undefined
  const report: JobReport = {}
  if (progress !== undefined) report.progress = progress
  if (logsChanged) report.logs = logs
  return report
}
