/**
 * What a job carries that no store query reads: the schedule slot it was fired for and its own
 * backoff. Every store keeps them as one JSON text (null when the job has neither, as most have),
 * so a plain job costs nothing more, and a field added here later needs no migration.
 */
import type { JobBackoff, JobSchedule, NewJob } from '../../core/job.js'

export interface JobMeta {
  schedule: JobSchedule | null
  backoff: JobBackoff | null
}

/** The JSON text a store keeps for a new job; null when it has nothing to keep. */
export function metaOf(job: Pick<NewJob, 'schedule' | 'backoff'>): string | null {
  if (job.schedule === null && job.backoff === null) return null
  const meta: Partial<JobMeta> = {}
  if (job.schedule !== null) meta.schedule = job.schedule
  if (job.backoff !== null) meta.backoff = job.backoff
  return JSON.stringify(meta)
}

const NO_META: JobMeta = { schedule: null, backoff: null }

/** The fields a job's meta text holds, each null when absent. */
export function readMeta(text: string | null): JobMeta {
  if (text === null) return NO_META
  const meta = JSON.parse(text) as Partial<JobMeta>
  return { schedule: meta.schedule ?? null, backoff: meta.backoff ?? null }
}
