/**
 * Schedules as users define them: a cron expression in a time zone, the job each slot fires, and
 * what to do with slots missed and with runs that overlap (docs/schedules.md). Checked here, once,
 * for every way a schedule comes in (a Worker's `schedules`, the library, the CLI), and again by
 * the store for a caller that reaches it directly.
 */
import { CronSchedule, MISSED_POLICIES, slotKey, type MissedPolicy } from './cron.js'
export { MISSED_POLICIES, type MissedPolicy } from './cron.js'
import { ValidationError } from './errors.js'
import type { JobBackoff, NewJob } from './job.js'
import { assertKnownKeys, optionKeys } from './option-keys.js'
import { assertName, normalizeJob, withFieldPrefix, type EnqueueOptions } from './validate.js'

/** `allow`: a slot fires whatever earlier runs do; `skip`: a slot is passed over while the job of
 * the schedule's last fire has not finished (scheduled, ready or active). */
export type OverlapPolicy = 'allow' | 'skip'

/** The job a schedule fires, as NewJob has it, less what each fire sets: run time, unique key, slot. */
export interface ScheduleJob {
  name: string
  queue: string
  /** JSON text. */
  payload: string
  priority: number
  maxAttempts: number
  timeoutMs: number | null
  group: string | null
  /** Each fired job's start deadline, from its fire; null for none. */
  expiresInMs: number | null
  backoff: JobBackoff | null
}

/** A schedule as it is defined: in code (a Worker's `schedules`), or at run time. */
export interface ScheduleDefinition {
  /** 1 to 128 characters of a name (NAME_PATTERN): it is part of each fired job's unique key. */
  id: string
  /** A cron expression of 5 fields, or 6 with seconds first (core/cron.ts). */
  cron: string
  /** The IANA time zone the expression reads in. */
  timeZone: string
  job: ScheduleJob
  missed: MissedPolicy
  overlap: OverlapPolicy
}

export const OVERLAP_POLICIES: readonly OverlapPolicy[] = ['allow', 'skip']

/** A schedule as a user writes it: the job's options as for an enqueue, less the ones each fire sets. */
export interface ScheduleOptions {
  id: string
  cron: string
  /** IANA time zone. Default 'UTC'. */
  timeZone?: string
  job: {
    name: string
    payload?: unknown
  } & Pick<
    EnqueueOptions,
    'queue' | 'priority' | 'maxAttempts' | 'timeoutMs' | 'group' | 'expiresInMs' | 'backoff'
  >
  /** Default 'skip'. */
  missed?: MissedPolicy
  /** Default 'allow'. */
  overlap?: OverlapPolicy
}

const SCHEDULE_KEYS = optionKeys<ScheduleOptions>({
  id: true,
  cron: true,
  timeZone: true,
  job: true,
  missed: true,
  overlap: true,
})
const SCHEDULE_JOB_KEYS = [
  'name',
  'payload',
  'queue',
  'priority',
  'maxAttempts',
  'timeoutMs',
  'group',
  'expiresInMs',
  'backoff',
] as const satisfies readonly (keyof ScheduleOptions['job'])[]

/** A schedule as written, checked (ValidationError naming the field under `field`) and completed. */
export function normalizeSchedule(input: unknown, field = ''): ScheduleDefinition {
  const at = (key: string): string => (field === '' ? key : `${field}.${key}`)
  assertKnownKeys(input, SCHEDULE_KEYS, field)
  const { id, cron, timeZone = 'UTC', job, missed = 'skip', overlap = 'allow' } = input as ScheduleOptions
  assertKnownKeys(job, SCHEDULE_JOB_KEYS, at('job'))
  const { name, payload = null, ...options } = job
  const normalized = normalizeJob(name, payload, options, { field: at('job') })
  const definition: ScheduleDefinition = {
    id,
    cron,
    timeZone,
    job: {
      name: normalized.name,
      queue: normalized.queue,
      payload: normalized.payload,
      priority: normalized.priority,
      maxAttempts: normalized.maxAttempts,
      timeoutMs: normalized.timeoutMs,
      group: normalized.group,
      expiresInMs: normalized.expiresInMs,
      backoff: normalized.backoff,
    },
    missed,
    overlap,
  }
  checkScheduleDefinition(definition, field)
  return definition
}

/**
 * Refuses a definition that is not whole and valid: what the store checks before it writes one,
 * so that a schedule no scheduler could fire is never stored. Returns the parsed expression.
 */
export function checkScheduleDefinition(definition: ScheduleDefinition, field = ''): CronSchedule {
  const at = (key: string): string => (field === '' ? key : `${field}.${key}`)
  assertKnownKeys(definition, ['id', 'cron', 'timeZone', 'job', 'missed', 'overlap'], field)
  const { id, cron, timeZone, job, missed, overlap } = definition
  assertName(id, at('id'), 'invalid_name')
  let schedule: CronSchedule
  try {
    schedule = new CronSchedule(cron, timeZone)
  } catch (error) {
    throw error instanceof ValidationError && field !== '' ? withFieldPrefix(error, field) : error
  }
  if (!MISSED_POLICIES.includes(missed)) {
    throw new ValidationError('invalid_option', at('missed'), `must be one of ${MISSED_POLICIES.join(', ')}`)
  }
  if (!OVERLAP_POLICIES.includes(overlap)) {
    throw new ValidationError(
      'invalid_option',
      at('overlap'),
      `must be one of ${OVERLAP_POLICIES.join(', ')}`,
    )
  }
  assertKnownKeys(
    job,
    ['name', 'queue', 'payload', 'priority', 'maxAttempts', 'timeoutMs', 'group', 'expiresInMs', 'backoff'],
    at('job'),
  )
  if (typeof job.payload !== 'string') {
    throw new ValidationError('invalid_payload', at('job.payload'), 'must be JSON text')
  }
  let payload: unknown
  try {
    payload = JSON.parse(job.payload)
  } catch {
    throw new ValidationError('invalid_payload', at('job.payload'), 'must be JSON text')
  }
  // The job's options, checked as an enqueue checks them: a fire must never be refused.
  normalizeJob(job.name, payload, scheduleJobOptions(job), { field: at('job') })
  return schedule
}

/** A schedule's job as enqueue options. */
function scheduleJobOptions(job: ScheduleJob): EnqueueOptions {
  return {
    queue: job.queue,
    priority: job.priority,
    maxAttempts: job.maxAttempts,
    timeoutMs: job.timeoutMs ?? undefined,
    group: job.group ?? undefined,
    expiresInMs: job.expiresInMs ?? undefined,
    backoff: job.backoff ?? undefined,
  }
}

/**
 * The job a slot fires: the schedule's job, due now, with the slot it was fired for and the slot's
 * unique key (cron:<id>:<slot>), the second guard against a slot fired twice.
 */
export function firedJob(id: string, job: ScheduleJob, slot: number, late: boolean): NewJob {
  return {
    queue: job.queue,
    name: job.name,
    payload: job.payload,
    priority: job.priority,
    runAt: null,
    delayMs: 0,
    maxAttempts: job.maxAttempts,
    timeoutMs: job.timeoutMs,
    uniqueKey: slotKey(id, slot),
    uniqueUntil: 'purged',
    uniqueForMs: null,
    debounceMs: null,
    group: job.group,
    expiresAt: null,
    expiresInMs: job.expiresInMs,
    schedule: { id, slot, late },
    backoff: job.backoff,
    keepForMs: null,
  }
}
