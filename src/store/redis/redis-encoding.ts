/**
 * Redis's arguments and replies, to and from Ferry's jobs: a job as the scripts return it (its id,
 * then the fields of lua/lib/prelude.lua's JOB_FIELDS), the flat arguments of enqueue, claim and
 * settle (a whole batch in one script call), and a delivery's message.
 */
import { ValidationError } from '../../core/errors.js'
import type { ClaimedJob, Job, JobError, NewJob } from '../../core/job.js'
import type { Settlement } from '../../core/outcome.js'
import { assertName } from '../../core/validate.js'
import type { Delivery } from '../kernel/delivery.js'
import { jobIdCheck } from '../kernel/job-ids.js'
import { metaOf, readMeta } from '../kernel/job-meta.js'
import { readReports, reportColumns } from '../kernel/job-reports.js'
import { uniqueUntilOf } from '../kernel/unique-keys.js'
import { toClaimedJob } from '../kernel/jobs.js'
import { newLeaseTokenBase } from '../kernel/lease-tokens.js'
import {
  changedQueue,
  changeFreesWork,
  QUEUE_CONTROL_COLUMNS,
  type QueueControlRow,
  toQueueControls,
} from '../kernel/queue-control.js'
import { keepMsToColumn } from '../kernel/retention.js'
import { checkSettlements, foldResults } from '../kernel/settlements.js'
import type { CheckedChange } from '../kernel/change-jobs.js'
import type { StatsCount } from '../kernel/stats.js'
import {
  definitionColumns,
  SCHEDULE_COLUMNS,
  scheduleChanges,
  type ScheduleRow,
} from '../kernel/schedules.js'
import type {
  ClaimParams,
  ControlParams,
  ControlRecord,
  EnqueueResult,
  LeaseSeen,
  RateLimit,
  SchedulesParams,
  SettleResult,
} from '../store.js'
import { jobFields } from './generated/assets.js'

/** Ids are drawn by INCRBY and travel through Lua's doubles: at most 16 digits stay exact. */
export const isJobId = jobIdCheck(16)

/**
 * A job as the scripts return it: its id, then JOB_FIELDS in order, null where absent. The list is
 * lua/lib/prelude.lua's, generated at embed time, so the scripts and this decoder cannot disagree
 * on the order.
 */
export type JobReply = readonly (string | number | null)[]

export const JOB_FIELDS: readonly string[] = jobFields

/** Each field's position in a JobReply (the id is 0). */
export const AT = Object.fromEntries(JOB_FIELDS.map((field, i) => [field, i + 1])) as Record<string, number>

export function toJob(reply: JobReply): Job {
  const text = (field: string): string | null => {
    const value = reply[AT[field]!]
    return value === null || value === undefined ? null : String(value)
  }
  const numberOr = (field: string, absent: number | null): number | null => {
    const value = reply[AT[field]!]
    return value === null || value === undefined ? absent : Number(value)
  }
  const createdAt = Number(reply[AT.c!])
  const lastError = text('e')
  const result = text('r')
  return {
    id: String(reply[0]),
    queue: text('q')!,
    name: text('n')!,
    payload: JSON.parse(text('p')!) as unknown,
    state: text('s') as Job['state'],
    priority: Number(reply[AT.pr!]),
    runAt: Number(reply[AT.ra!]),
    attempts: numberOr('a', 0)!,
    maxAttempts: Number(reply[AT.ma!]),
    timeoutMs: numberOr('to', null),
    uniqueKey: text('uk'),
    group: text('g'),
    expiresAt: numberOr('x', null),
    ...readMeta(text('m')),
    lastError: lastError === null ? null : (JSON.parse(lastError) as JobError),
    result: result === null ? null : (JSON.parse(result) as unknown),
    ...readReports(text('pg'), text('lo')),
    workerId: text('w'),
    leaseExpiresAt: numberOr('le', null),
    createdAt,
    updatedAt: numberOr('u', createdAt)!,
    finishedAt: numberOr('f', null),
  }
}

export function toClaimedReply(reply: JobReply): ClaimedJob {
  return toClaimedJob(toJob(reply), String(reply[AT.lt!]))
}

/** An integer as Redis and Lua read it back exactly (no exponent). */
export function integer(value: number): string {
  return Number.isSafeInteger(value) ? String(value) : Math.round(value).toFixed(0)
}

/**
 * The enqueue script's arguments, two per job: its spec ("queue,name,priority,runAt,delayMs,
 * maxAttempts,timeoutMs,uniqueKey", prefixed by "+expiresAt,expiresInMs,groupBytes,metaBytes,"
 * then the group and the meta for a job with a group, a start deadline or a meta, and all of it by
 * "~uniqueUntil,uniqueForMs,debounceMs," for a unique key with a mode: lua/lib/enqueue-core.lua)
 * and its payload. Refused whole above maxBytes.
 */
export function enqueueArgs(jobs: readonly NewJob[], maxBytes: number): string[] {
  const args: string[] = new Array(jobs.length * 2)
  // The command's length in UTF-16 units (never more than its UTF-8 bytes, which the Client
  // checks against maxCallBytes): a call past V8's string ceiling would fail inside ioredis.
  let length = 0
  for (let i = 0; i < jobs.length; i++) {
    const job = jobs[i]!
    // Names reach key names and the comma-separated spec: only the validated alphabet may.
    assertName(job.queue, `jobs[${i}].queue`)
    assertName(job.name, `jobs[${i}].name`)
    // Only a job with a group, a deadline or a meta carries the prefix, so the others cost nothing
    // more. Lengths are in UTF-8 bytes, as Lua's strings count: a group and a meta may hold commas,
    // like the unique key. (`== null`: a NewJob built by hand before these fields existed leaves
    // them undefined.)
    const { group, expiresAt, expiresInMs } = job
    const meta = metaOf(job)
    const extra =
      group == null && expiresAt == null && expiresInMs == null && meta === null
        ? ''
        : `+${expiresAt == null ? '' : integer(expiresAt)},${expiresInMs == null ? '' : integer(expiresInMs)},` +
          `${group == null ? '' : Buffer.byteLength(group)},${meta === null ? '' : Buffer.byteLength(meta)},` +
          (group ?? '') +
          (meta ?? '')
    const until = uniqueUntilOf(job)
    const mode =
      job.uniqueKey == null || (until === null && job.uniqueForMs == null && job.debounceMs == null)
        ? ''
        : `~${until ?? ''},${job.uniqueForMs == null ? '' : integer(job.uniqueForMs)},` +
          `${job.debounceMs == null ? '' : integer(job.debounceMs)},`
    args[2 * i] =
      mode +
      extra +
      `${job.queue},${job.name},${integer(job.priority)},${job.runAt === null ? '' : integer(job.runAt)},` +
      `${integer(job.delayMs)},${integer(job.maxAttempts)},${job.timeoutMs === null ? '' : integer(job.timeoutMs)},` +
      (job.uniqueKey ?? '')
    args[2 * i + 1] = job.payload
    length += args[2 * i]!.length + job.payload.length
  }
  if (length > maxBytes) {
    throw new ValidationError(
      'payload_too_large',
      'jobs',
      `${jobs.length} jobs of ${length} characters in all are more than one enqueue to Redis can carry (${maxBytes} bytes): enqueue them in smaller batches`,
    )
  }
  return args
}

export function claimArgs({ queues, names = [], limit, leaseMs, workerId }: ClaimParams): string[] {
  return [
    String(limit),
    String(leaseMs),
    workerId,
    newLeaseTokenBase(),
    String(queues.length),
    ...queues,
    String(names.length),
    ...names,
  ]
}

/**
 * The settle script's arguments, seven per item (lua/lib/settle-core.lua); `sent` maps its results back to the input (a malformed id is lost).
 */
export function settleArgs(settlements: readonly Settlement[]): { args: string[]; sent: number[] } {
  checkSettlements(settlements)
  const args: string[] = ['0']
  const sent: number[] = []
  settlements.forEach((s, i) => {
    if (!isJobId(s.id) || typeof s.leaseToken !== 'string') return
    const { progress, logs } = reportColumns(s.report)
    switch (s.kind) {
      case 'completed':
        args.push('completed', s.id, s.leaseToken, '', s.result === undefined ? '' : JSON.stringify(s.result))
        break
      case 'retry':
      case 'snoozed':
        args.push(
          s.kind,
          s.id,
          s.leaseToken,
          integer(s.runAt),
          s.kind === 'retry' ? JSON.stringify(s.error) : '',
        )
        break
      case 'dead':
        args.push('dead', s.id, s.leaseToken, '', JSON.stringify(s.error))
        break
    }
    args.push(progress ?? '', logs ?? '')
    sent.push(i)
  })
  args[0] = String(sent.length)
  return { args, sent }
}

/** Per-item results: 'ok' for the items sent (at `sent`) that the script answered 1 for. */
export function mergeSettled(
  sent: readonly number[],
  reply: readonly number[],
  count: number,
): SettleResult[] {
  return foldResults(count, 'lease_lost', [['ok', sent.filter((_, n) => reply[n] === 1)]])
}

/**
 * lua/control.lua's arguments: the stop request, then the queue change (checked before: at most
 * one), whether it may free work for the queue's waiters, and its values. Optional text goes as ''
 * for none or '=' and the text, so that an empty text stays one. A limit goes as '1' to clear them
 * all (else ''), then one value per field of control.lua's LIMIT_FIELDS: '' to leave it, '-' to
 * remove it (null), else the number; a rate is two fields, its limit and its window.
 */
export function controlArgs(params: ControlParams): string[] {
  const { requestStop = false, pause, resume, limit, retention } = params
  const change = pause ? 'pause' : resume ? 'resume' : limit ? 'limit' : retention ? 'retention' : ''
  const args = [
    requestStop ? '1' : '',
    change,
    changedQueue(params) ?? '',
    changeFreesWork(params) ? '1' : '',
  ]
  const optional = (text: string | undefined): string => (text === undefined ? '' : `=${text}`)
  const value = (n: number | null | undefined): string =>
    n === undefined ? '' : n === null ? '-' : integer(n)
  if (pause) args.push(optional(pause.by), optional(pause.reason))
  if (limit) {
    if (limit.clear === true) {
      args.push('1')
    } else {
      const rate = (r: RateLimit | null | undefined): [string, string] =>
        r === undefined ? ['', ''] : r === null ? ['-', '-'] : [integer(r.limit), integer(r.perMs)]
      args.push(
        '',
        value(limit.concurrency),
        ...rate(limit.rate),
        value(limit.groupConcurrency),
        ...rate(limit.groupRate),
      )
    }
  }
  if (retention) {
    if (retention.clear === true) {
      args.push('1')
    } else {
      const keepMs = (ms: number | null | undefined): string =>
        ms === undefined ? '' : value(keepMsToColumn(ms))
      args.push(
        '',
        keepMs(retention.completedMs),
        keepMs(retention.deadMs),
        value(retention.completedCount),
        value(retention.deadCount),
      )
    }
  }
  return args
}

/**
 * lua/control.lua's reply: the stop time's text (or null), then per queue with a setting its name
 * and each of QUEUE_CONTROL_COLUMNS, in order (control.lua's SETTINGS), then the schedules
 * version's text (null before the first change).
 */
export function toControlRecord([stop, flat, schedulesVersion]: [
  string | null,
  (string | null)[],
  string | null,
]): ControlRecord {
  const rows: QueueControlRow[] = []
  const width = QUEUE_CONTROL_COLUMNS.length + 1
  for (let i = 0; i < flat.length; i += width) {
    const row = { queue: flat[i]! } as QueueControlRow
    QUEUE_CONTROL_COLUMNS.forEach((column, k) => (row[column] = flat[i + 1 + k] ?? null))
    rows.push(row)
  }
  return {
    stopRequestedAt: stop === null ? null : Number(stop),
    queues: toQueueControls(rows),
    schedulesVersion: Number(schedulesVersion ?? 0),
  }
}

/**
 * enqueue_jobs's reply (lua/lib/enqueue-core.lua) as each job's result, in input order: the server's
 * time, the first id (job n, when created, has first id + n - 1), then the position (1-based,
 * negated for a debounced job) and the holder's id of each job whose unique key was held.
 */
export function toEnqueueResults(
  count: number,
  [, firstId, ...notCreated]: readonly (string | number)[],
): EnqueueResult[] {
  const results: EnqueueResult[] = new Array(count)
  for (let i = 0; i < count; i++) results[i] = { id: String(Number(firstId) + i), created: true }
  for (let k = 0; k < notCreated.length; k += 2) {
    const position = Number(notCreated[k])
    const id = String(notCreated[k + 1])
    results[Math.abs(position) - 1] =
      position < 0 ? { id, created: false, debounced: true } : { id, created: false }
  }
  return results
}

/**
 * lua/schedules.lua's arguments: each change of the call, in the order it applies; a put with the
 * definition's columns as a row keeps them, which the script compares with the stored ones.
 */
export function schedulesArgs(params: SchedulesParams): string[] {
  const args: string[] = []
  for (const { id, change } of scheduleChanges(params)) {
    if ('put' in change) {
      const { cron, time_zone, job, missed, overlap } = definitionColumns(change.put)
      args.push('put', id, cron, time_zone, job, missed, overlap)
    } else {
      args.push('remove' in change ? 'remove' : 'pause' in change ? 'pause' : 'resume', id)
    }
  }
  return args
}

/** A schedule's hash as HGETALL gives it (fields and values): its row, each absent column null; null for none. */
export function toScheduleRow(fields: readonly string[]): ScheduleRow | null {
  if (fields.length === 0) return null
  const row = Object.fromEntries(SCHEDULE_COLUMNS.map((column) => [column, null])) as Record<
    string,
    string | null
  >
  for (let i = 0; i < fields.length; i += 2) row[fields[i]!] = fields[i + 1]!
  return row as unknown as ScheduleRow
}

/** What each of the counts after a queue's name in lua/stats.lua's reply is of, in order. */
const STATS_ROW = [
  'ready',
  'scheduled',
  'active',
  'completed',
  'dead',
  'expired',
  'recentCompleted',
  'recentDead',
] as const satisfies readonly StatsCount['of'][]

/**
 * stats.lua's reply as counts: per queue, its name, then a count of each of STATS_ROW in that order,
 * then the runAt of its oldest ready job (-1: none).
 */
export function statsCounts(rows: readonly (string | number)[]): StatsCount[] {
  const counts: StatsCount[] = []
  const width = STATS_ROW.length + 2
  for (let i = 0; i < rows.length; i += width) {
    const values = rows.slice(i + 1, i + width).map(Number)
    // The script lists every queue it knows; one that holds no job is left out, as elsewhere.
    if (values.slice(0, 5).every((count) => count === 0)) continue
    const queue = String(rows[i])
    const oldest = values[STATS_ROW.length]!
    STATS_ROW.forEach((of, k) =>
      counts.push({
        queue,
        of,
        count: values[k]!,
        ...(of === 'ready' && oldest >= 0 && { oldestAt: oldest }),
      }),
    )
  }
  return counts
}

/**
 * Jobs an enqueue claimed for one of this store's waiters (lua/lib/deliver.lua): '<waiter id> <JSON
 * jobs>', or '<waiter id> #<id>,<id>…' when they were too large to send, to be read. Null for a
 * message it cannot read.
 */
export function decodeDelivery(message: string): Delivery | null {
  try {
    const space = message.indexOf(' ')
    const waiterId = message.slice(0, space)
    const body = message.slice(space + 1)
    if (body.startsWith('#')) return { waiterId, ids: body.slice(1).split(',').filter(isJobId) }
    // Lua's nil travels as false in JSON.
    const replies = JSON.parse(body) as (string | number | false)[][]
    return {
      waiterId,
      jobs: replies.map((reply) => toClaimedReply(reply.map((value) => (value === false ? null : value)))),
    }
  } catch {
    // Unreadable: its leases run out and recoverExpired puts the jobs back.
    return null
  }
}

/**
 * lua/recover-expired.lua's arguments: every expired lease, or only the leases given (those of a
 * valid id and token); null when there is nothing to ask (no valid lease, no deadlines to expire).
 */
export function recoverArgs(
  limit: number,
  expireJobs: boolean,
  leases: readonly LeaseSeen[] | undefined,
): (string | number)[] | null {
  const args: (string | number)[] = [limit, expireJobs ? '1' : '']
  if (leases === undefined) {
    args.push('all')
    return args
  }
  args.push('leases')
  for (const { id, leaseToken, leaseExpiresAt } of leases) {
    if (isJobId(id) && typeof leaseToken === 'string') args.push(id, leaseToken, integer(leaseExpiresAt))
  }
  return args.length === 3 && !expireJobs ? null : args
}

/** lua/change-jobs.lua's arguments: five per change of a valid id (an absent field empty). */
export function changeJobsArgs(changes: readonly CheckedChange[]): string[] {
  const args: string[] = []
  const text = (value: number | null): string => (value === null ? '' : integer(value))
  for (const { id, priority, runAt, payload, maxAttempts } of changes) {
    if (id !== null) args.push(id, text(priority), text(runAt), payload ?? '', text(maxAttempts))
  }
  return args
}
