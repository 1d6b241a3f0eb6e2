/**
 * The enqueue's transaction body: jobs without a unique key go ENQUEUE_ROWS to a statement
 * (sql/enqueue-rows-shared.sql when they share every column but id and payload, else
 * sql/enqueue-rows.sql), the rest one statement each (sql/enqueue.sql, whose conflict clause
 * keeps a held key's job out), in the order given. Each job created takes the next id: a statement
 * of one job finds it itself, runs of rows count from the one read before the first of them
 * (sql/enqueue-next-id.sql). Ids follow the order of the jobs. The jobs created are added to
 * their queue's and state's count once per queue and state at the end (sql/enqueue-count.sql):
 * inserts are the one change of ferry_jobs no trigger counts (migrations/0014_job_counts.sql).
 */
import type { NewJob } from '../../core/job.js'
import type { EnqueueResult } from '../store.js'
import { deadlineOf } from '../kernel/jobs.js'
import { hasMeta, metaOf } from '../kernel/job-meta.js'
import { throttleEnded, uniqueExpiresAtOf, uniqueUntilOf } from '../kernel/unique-keys.js'
import { changeJobRows, type ChangedRows } from './change-job-rows.js'
import type { SqliteConnection, Statement } from './sqlite-connection.js'

/**
 * Rows per multi-row statement. A statement per row spent more per job than the insert itself:
 * 10,000 jobs went in at about a third of the rate of one transaction of bare inserts; rows in
 * statements of 50 to 100 took half the time (probes of 10,000-job transactions, 7 rounds each).
 */
export const ENQUEUE_ROWS = 64
/** Parameters per row of sql/enqueue-rows.sql. */
const ROW_PARAMS = 14

/** What an enqueue wrote, for the wake-ups that follow its commit. */
export interface EnqueuedRows {
  results: EnqueueResult[]
  /** Queues given a ready job. */
  readyQueues: Set<string>
  /** The earliest run time of a scheduled job, null for none. */
  earliestScheduled: number | null
}

export function enqueueRows(connection: SqliteConnection, jobs: readonly NewJob[], at: number): EnqueuedRows {
  const results: EnqueueResult[] = new Array(jobs.length)
  const readyQueues = new Set<string>()
  let earliestScheduled: number | null = null
  /** Jobs created per queue, in each state. */
  const created = new Map<string, { ready: number; scheduled: number }>()
  /** The state of `count` jobs created like `job`, noting what they wake and counting them. */
  const stateOf = (job: NewJob, runAt: number, count = 1): 'ready' | 'scheduled' => {
    let counts = created.get(job.queue)
    if (counts === undefined) {
      counts = { ready: 0, scheduled: 0 }
      created.set(job.queue, counts)
    }
    if (runAt <= at) {
      readyQueues.add(job.queue)
      counts.ready += count
      return 'ready'
    }
    if (earliestScheduled === null || runAt < earliestScheduled) earliestScheduled = runAt
    counts.scheduled += count
    return 'scheduled'
  }

  // Read when a run of rows needs it; a job inserted alone finds its own (sql/enqueue.sql).
  let nextId: number | null = null
  let rows: Statement | null = null
  let params: unknown[] | null = null
  let shared: Statement | null = null
  let sharedParams: unknown[] | null = null
  /** A debounced holder's new run time, noted as a job enqueued with it would be. */
  const noteChanged = ({ readyQueues: ready, earliestScheduled: earliest }: ChangedRows): void => {
    for (const queue of ready) readyQueues.add(queue)
    if (earliest !== null && (earliestScheduled === null || earliest < earliestScheduled))
      earliestScheduled = earliest
  }
  let i = 0
  while (i < jobs.length) {
    if (takesRows(jobs, i)) {
      nextId ??= connection.statement('enqueue-next-id').pluck().get() as number
      const first = jobs[i]!
      const runAt = first.runAt ?? at + first.delayMs
      const meta = metaOf(first)
      if (sharesColumns(jobs, i, runAt, meta, at)) {
        shared ??= connection.rowsStatement('enqueue-rows-shared', ENQUEUE_ROWS)
        sharedParams ??= new Array<unknown>(ENQUEUE_ROWS * 2)
        for (let row = 0; row < ENQUEUE_ROWS; row++) {
          sharedParams[2 * row] = nextId + row
          sharedParams[2 * row + 1] = jobs[i + row]!.payload
        }
        shared.run(sharedParams, {
          queue: first.queue,
          name: first.name,
          state: stateOf(first, runAt, ENQUEUE_ROWS),
          priority: first.priority,
          run_at: runAt,
          max_attempts: first.maxAttempts,
          timeout_ms: first.timeoutMs,
          group_key: first.group,
          expires_at: deadlineOf(first, at),
          at,
          meta,
        })
      } else {
        rows ??= connection.rowsStatement('enqueue-rows', ENQUEUE_ROWS)
        params ??= new Array<unknown>(ENQUEUE_ROWS * ROW_PARAMS)
        for (let row = 0; row < ENQUEUE_ROWS; row++) {
          const job = jobs[i + row]!
          const jobRunAt = job.runAt ?? at + job.delayMs
          const p = row * ROW_PARAMS
          params[p] = nextId + row
          params[p + 1] = job.queue
          params[p + 2] = job.name
          params[p + 3] = job.payload
          params[p + 4] = stateOf(job, jobRunAt)
          params[p + 5] = job.priority
          params[p + 6] = jobRunAt
          params[p + 7] = job.maxAttempts
          params[p + 8] = job.timeoutMs
          params[p + 9] = job.group
          params[p + 10] = deadlineOf(job, at)
          params[p + 11] = at
          params[p + 12] = at
          params[p + 13] = metaOf(job)
        }
        rows.run(params)
      }
      for (let row = 0; row < ENQUEUE_ROWS; row++)
        results[i + row] = { id: String(nextId + row), created: true }
      nextId += ENQUEUE_ROWS
      i += ENQUEUE_ROWS
    } else {
      const result = enqueueOne(connection, jobs[i]!, at, stateOf, noteChanged)
      if (result.created && nextId !== null) nextId++
      results[i] = result
      i++
    }
  }
  if (created.size > 0) {
    const count = connection.statement('enqueue-count')
    for (const [queue, { ready, scheduled }] of created) {
      if (ready > 0) count.run({ queue, state: 'ready', count: ready })
      if (scheduled > 0) count.run({ queue, state: 'scheduled', count: scheduled })
    }
  }
  return { results, readyQueues, earliestScheduled }
}

/** Whether the ENQUEUE_ROWS jobs from `first` are there and none has a unique key. */
function takesRows(jobs: readonly NewJob[], first: number): boolean {
  if (first + ENQUEUE_ROWS > jobs.length) return false
  for (let i = first; i < first + ENQUEUE_ROWS; i++) if (jobs[i]!.uniqueKey !== null) return false
  return true
}

/**
 * Whether the ENQUEUE_ROWS jobs from `first` (none with a unique key) share every column but their
 * id and payload (`meta` is the first one's), so that sql/enqueue-rows-shared.sql can bind those columns once.
 */
function sharesColumns(
  jobs: readonly NewJob[],
  first: number,
  runAt: number,
  meta: string | null,
  at: number,
): boolean {
  const a = jobs[first]!
  for (let i = first + 1; i < first + ENQUEUE_ROWS; i++) {
    const b = jobs[i]!
    if (
      b.queue !== a.queue ||
      b.name !== a.name ||
      b.priority !== a.priority ||
      b.maxAttempts !== a.maxAttempts ||
      b.timeoutMs !== a.timeoutMs ||
      b.group !== a.group ||
      deadlineOf(b, at) !== deadlineOf(a, at) ||
      (b.runAt ?? at + b.delayMs) !== runAt ||
      // A plain job's meta is null: only jobs with a slot, a backoff or a keepForMs pay for the comparison.
      ((hasMeta(b) || meta !== null) && metaOf(b) !== meta)
    )
      return false
  }
  return true
}

function enqueueOne(
  connection: SqliteConnection,
  job: NewJob,
  at: number,
  stateOf: (job: NewJob, runAt: number) => 'ready' | 'scheduled',
  noteChanged: (changed: ChangedRows) => void,
): EnqueueResult {
  const runAt = job.runAt ?? at + job.delayMs
  // A held key: nothing is inserted, and the state must count neither as a wake-up nor as a job
  // created (stateOf would).
  const ready = runAt <= at
  const params = [
    job.queue,
    job.name,
    job.payload,
    ready ? 'ready' : 'scheduled',
    job.priority,
    runAt,
    job.maxAttempts,
    job.timeoutMs,
    job.uniqueKey,
    job.group,
    deadlineOf(job, at),
    at,
    at,
    metaOf(job),
    job.uniqueKey,
    uniqueUntilOf(job),
    uniqueExpiresAtOf(job, at),
  ]
  const insert = connection.statement('enqueue')
  let inserted = insert.run(params)
  if (inserted.changes === 0) {
    const holder = connection.statement('enqueue-find-unique').get({ unique_key: job.uniqueKey }) as {
      id: number
      unique_expires_at: number | null
    }
    const id = String(holder.id)
    if (!throttleEnded(holder.unique_expires_at, at)) {
      if (job.debounceMs === null) return { id, created: false }
      // Debounced: a holder that has not started takes this payload and run time, through the
      // change of a queued job (change-job-rows.ts); one that has (and holds the key until it
      // finishes) is left as it is. No claim can come between, inside this write transaction.
      const changed = changeJobRows(
        connection,
        [{ id, priority: null, runAt: at + job.debounceMs, payload: job.payload, maxAttempts: null }],
        at,
      )
      if (changed.results[0] !== 'ok') return { id, created: false }
      noteChanged(changed)
      return { id, created: false, debounced: true }
    }
    // A throttle's window has ended: the key is free, and this job takes it in the same transaction.
    connection.statement('enqueue-free-unique').run({ id: holder.id })
    inserted = insert.run(params)
  }
  stateOf(job, runAt)
  return { id: String(inserted.lastInsertRowid), created: true }
}
