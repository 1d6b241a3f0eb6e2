/**
 * What a job carries beside its columns: the schedule slot it was fired for, its own backoff, its
 * own retention (keepForMs) and the trace context of its enqueue (trace: docs/tracing.md). Every store keeps them as one JSON text (null when the job has
 * none, as most have), so a plain job costs nothing more, and a field added here later needs no
 * migration. Only keepForMs is read by a query (prune), through a column each SQL store derives
 * from the text (keep_for_ms) and a field Redis copies at enqueue ('k').
 */
import type { JobBackoff, JobSchedule, JobTraceContext, NewJob } from '../../core/job.js'
import { KEEP_FOREVER_MS } from './retention.js'

export interface JobMeta {
  schedule: JobSchedule | null
  backoff: JobBackoff | null
  keepForMs: number | null
  trace: JobTraceContext | null
}

type MetaFields = Pick<NewJob, 'schedule' | 'backoff' | 'keepForMs' | 'trace'>

/** Whether a new job has a meta text to keep: the stores' test before they encode one. */
export function hasMeta(job: MetaFields): boolean {
  // `!= null` for trace: a NewJob built by hand, as before the field existed, leaves it out.
  return job.schedule !== null || job.backoff !== null || job.keepForMs !== null || job.trace != null
}

/** The JSON text a store keeps for a new job; null when it has nothing to keep. */
export function metaOf(job: MetaFields): string | null {
  if (!hasMeta(job)) return null
  const meta: Partial<JobMeta> = {}
  if (job.schedule !== null) meta.schedule = job.schedule
  if (job.backoff !== null) meta.backoff = job.backoff
  if (job.keepForMs !== null) meta.keepForMs = job.keepForMs === Infinity ? KEEP_FOREVER_MS : job.keepForMs
  if (job.trace != null) meta.trace = job.trace
  return JSON.stringify(meta)
}

const NO_META: JobMeta = { schedule: null, backoff: null, keepForMs: null, trace: null }

/** The fields a job's meta text holds, each null when absent. */
export function readMeta(text: string | null): JobMeta {
  if (text === null) return NO_META
  const meta = JSON.parse(text) as Partial<JobMeta>
  const keepForMs = meta.keepForMs ?? null
  return {
    schedule: meta.schedule ?? null,
    backoff: meta.backoff ?? null,
    keepForMs: keepForMs !== null && keepForMs >= KEEP_FOREVER_MS ? Infinity : keepForMs,
    trace: meta.trace ?? null,
  }
}
