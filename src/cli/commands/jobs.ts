import type { Command } from 'commander'
import { getJob, listJobs, LIST_LIMIT_DEFAULT } from '../../admin/inspect.js'
import { assertJobIds } from '../../admin/job-ids.js'
import { changeJob, type JobChanges } from '../../admin/manage.js'
import { withStore } from '../../admin/with-store.js'
import { JobNotFoundError, ValidationError } from '../../core/errors.js'
import { JOB_STATES, type Job, type JobBackoff, type JobError, type JobState } from '../../core/job.js'
import { parseDuration } from '../../core/duration.js'
import {
  assertName,
  MAX_ATTEMPTS_LIMIT,
  parseInteger,
  PRIORITY_MAX,
  PRIORITY_MIN,
} from '../../core/validate.js'
import type { ListJobsParams } from '../../store/store.js'
import {
  countOf,
  formatDuration,
  formatInstant,
  formatJson,
  formatTable,
  painter,
  toIso,
  truncate,
  type Color,
} from '../format.js'
import { existingStore } from '../open.js'
import { parsePayload, parseRunAtFlag } from './enqueue.js'

interface ChangeFlags {
  priority?: string
  runAt?: string
  delay?: string
  runNow?: boolean
  payload?: string
  maxAttempts?: string
  json?: boolean
}

interface JobsFlags {
  state?: string
  queue?: string
  limit?: string
  json?: boolean
}

const ERROR_COLUMN_WIDTH = 60

export function registerJobs(program: Command): void {
  const jobs = program
    .command('jobs')
    .description('list jobs, newest first; `ferry jobs show <id>` shows one in full')
    .option('--state <state>', `only jobs in this state: ${JOB_STATES.join(', ')}`)
    .option('--queue <queue>', 'only jobs of this queue')
    .option('--limit <n>', `at most this many jobs (default ${LIST_LIMIT_DEFAULT})`)
    .option('--json', 'print a JSON array of jobs (shape in docs/cli.md)')
    .action(async (flags: JobsFlags) => {
      const filter: ListJobsParams = {}
      if (flags.state !== undefined) filter.state = parseState(flags.state)
      if (flags.queue !== undefined) {
        assertName(flags.queue, '--queue')
        filter.queue = flags.queue
      }
      if (flags.limit !== undefined) filter.limit = parseInteger(flags.limit, '--limit', { min: 1 })
      const { jobs: found, nextCursor } = await withStore(existingStore(program), (store) =>
        listJobs(store, filter),
      )

      if (flags.json === true) {
        process.stdout.write(formatJson(found.map(jobToJson)))
        return
      }
      if (found.length === 0) {
        process.stdout.write('no jobs match\n')
        return
      }
      const now = Date.now()
      const paint = painter(process.stdout)
      process.stdout.write(
        formatTable(
          ['ID', 'QUEUE', 'NAME', 'STATE', 'PRIORITY', 'ATTEMPTS', 'RUN AT / FINISHED AT', 'LAST ERROR'],
          found.map((job) => [
            job.id,
            job.queue,
            job.name,
            job.state,
            String(job.priority),
            `${job.attempts}/${job.maxAttempts}`,
            formatInstant(job.finishedAt ?? job.runAt, now),
            job.lastError === null ? '' : truncate(lastErrorLine(job), ERROR_COLUMN_WIDTH),
          ]),
          ['right', 'left', 'left', 'left', 'right', 'right'],
          (line, index) => {
            const color = rowColor(found[index]!)
            return color === undefined ? line : paint(line, color)
          },
        ),
      )
      // A hint, not data: stderr keeps stdout to the table.
      if (nextCursor !== null)
        process.stderr.write(`(the newest ${found.length} shown; more match: raise --limit)\n`)
    })

  jobs
    .command('show')
    .description('one job with every field')
    .argument('<id>', 'job id')
    .option('--json', 'print the job as a JSON object (shape in docs/cli.md)')
    .action(async (id: string, flags: { json?: boolean }) => {
      // Checked before the store is opened, as every flag is: a typo needs no connection to report.
      assertJobIds([id], 'id')
      const job = await withStore(existingStore(program), (store) => getJob(store, { id }))
      if (job === null) throw new JobNotFoundError(id)
      // `ferry jobs show 7 --json`: commander hands a --json after the id to `jobs`, which has one too.
      const json = flags.json === true || jobs.opts<JobsFlags>().json === true
      process.stdout.write(json ? formatJson(jobToJson(job)) : describeJob(job, Date.now()))
    })

  jobs
    .command('change')
    .description(
      'change a job that has not started (scheduled or ready): priority, run time, payload, attempts',
    )
    .argument('<id>', 'job id')
    .option('--priority <n>', 'integer, higher runs first: the job moves to its new place in line')
    .option('--run-at <instant>', 'run no earlier than this: ISO 8601 (2030-01-31T09:00:00Z) or epoch ms')
    .option('--delay <duration>', 'run no earlier than this from now: 500ms, 5s, 10m, 2h, 1d')
    .option('--run-now', 'run it now (a scheduled job becomes ready)')
    .option('--payload <json>', 'replace the payload with this JSON')
    .option('--max-attempts <n>', 'attempts before the job is dead, the first included')
    .option('--json', 'print the changed job as a JSON object (shape in docs/cli.md)')
    .action(async (id: string, flags: ChangeFlags, command: Command) => {
      // Checked before the store is opened, as every flag is: a typo needs no connection to report.
      assertJobIds([id], 'id')
      const times = [flags.runAt && '--run-at', flags.delay && '--delay', flags.runNow && '--run-now']
      const given = times.filter((flag) => typeof flag === 'string')
      if (given.length > 1)
        command.error(`error: give one of --run-at, --delay and --run-now, not ${given.join(' and ')}`)
      const changes: JobChanges = {}
      if (flags.priority !== undefined) {
        changes.priority = parseInteger(flags.priority, '--priority', {
          min: PRIORITY_MIN,
          max: PRIORITY_MAX,
        })
      }
      if (flags.runAt !== undefined) changes.runAt = parseRunAtFlag(flags.runAt, '--run-at')
      // From this host's clock, as `ferry enqueue --delay` counts: a store on a server whose clock
      // is a little behind holds a "now" job for that little.
      if (flags.delay !== undefined) changes.runAt = Date.now() + parseDuration(flags.delay, '--delay')
      if (flags.runNow === true) changes.runAt = Date.now()
      if (flags.payload !== undefined) changes.payload = parsePayload(flags.payload, '--payload')
      if (flags.maxAttempts !== undefined) {
        changes.maxAttempts = parseInteger(flags.maxAttempts, '--max-attempts', {
          min: 1,
          max: MAX_ATTEMPTS_LIMIT,
        })
      }
      if (Object.keys(changes).length === 0) {
        command.error(
          'error: give what to change: --priority, --run-at, --delay, --run-now, --payload or --max-attempts',
        )
      }
      const job = await withStore(existingStore(program), (store) => changeJob(store, id, changes))
      // `ferry jobs change 7 --priority 1 --json`: commander may hand --json to `jobs`, as for show.
      const json = flags.json === true || jobs.opts<JobsFlags>().json === true
      process.stdout.write(
        json
          ? formatJson(jobToJson(job))
          : `job ${job.id} changed: ${job.state}, priority ${job.priority}, run at ${formatInstant(job.runAt, Date.now())}, ${job.attempts} of ${job.maxAttempts} attempts used\n`,
      )
    })
}

/**
 * A completed job keeps the error of the attempt that failed before the one that succeeded: it
 * says so, or the table reads as if the job had failed.
 */
function lastErrorLine(job: Job): string {
  const message = job.lastError?.message ?? ''
  return job.state === 'completed' ? `(earlier attempt) ${message}` : message
}

/** Dead rows in red; rows of jobs whose last attempt failed and that will run again in yellow. */
function rowColor(job: Job): Color | undefined {
  if (job.state === 'dead') return 'red'
  if (job.lastError !== null && job.state !== 'completed') return 'yellow'
  return undefined
}

function parseState(text: string): JobState {
  if (!(JOB_STATES as readonly string[]).includes(text)) {
    throw new ValidationError(
      'invalid_option',
      '--state',
      `"${text}" is not a state (use ${JOB_STATES.join(', ')})`,
    )
  }
  return text as JobState
}

/** The --json form of a job: every field of Job, in its order, with instants as ISO 8601 text. */
function jobToJson(job: Job): Record<string, unknown> {
  return {
    id: job.id,
    queue: job.queue,
    name: job.name,
    payload: job.payload,
    state: job.state,
    priority: job.priority,
    runAt: toIso(job.runAt),
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    timeoutMs: job.timeoutMs,
    uniqueKey: job.uniqueKey,
    group: job.group,
    expiresAt: toIso(job.expiresAt),
    schedule: job.schedule === null ? null : { ...job.schedule, slot: toIso(job.schedule.slot) },
    backoff: job.backoff,
    // JSON has no Infinity: a job kept until purged says so in words.
    keepForMs: job.keepForMs === Infinity ? 'forever' : job.keepForMs,
    trace: job.trace,
    lastError: job.lastError,
    result: job.result,
    progress: job.progress,
    logs: job.logs,
    workerId: job.workerId,
    leaseExpiresAt: toIso(job.leaseExpiresAt),
    createdAt: toIso(job.createdAt),
    updatedAt: toIso(job.updatedAt),
    finishedAt: toIso(job.finishedAt),
  }
}

function describeJob(job: Job, now: number): string {
  const instant = (ms: number | null): string => (ms === null ? '-' : formatInstant(ms, now))
  const fields: [string, string][] = [
    ['id', job.id],
    ['queue', job.queue],
    ['name', job.name],
    ['state', job.state],
    ['priority', String(job.priority)],
    ['attempts', `${job.attempts} of ${job.maxAttempts}`],
    ['progress', job.progress === null ? '-' : JSON.stringify(job.progress)],
    ['timeout', job.timeoutMs === null ? "the worker's default" : formatDuration(job.timeoutMs)],
    ['unique key', job.uniqueKey ?? '-'],
    ['group', job.group ?? '-'],
    ['run at', instant(job.runAt)],
    ['start deadline', instant(job.expiresAt)],
    [
      'kept for',
      job.keepForMs === null
        ? "its queue's retention"
        : job.keepForMs === Infinity
          ? 'forever'
          : `${formatDuration(job.keepForMs)} once finished`,
    ],
    [
      'schedule',
      job.schedule === null
        ? '-'
        : `${job.schedule.id}, slot ${toIso(job.schedule.slot)}${job.schedule.late ? ' (late: a missed slot)' : ''}`,
    ],
    ['backoff', job.backoff === null ? "the worker's" : describeBackoff(job.backoff)],
    // The enqueue's trace (docs/tracing.md): what to look the job up by in a tracing backend.
    ['trace', job.trace === null ? '-' : job.trace.traceparent],
    ['created at', instant(job.createdAt)],
    ['updated at', instant(job.updatedAt)],
    ['finished at', instant(job.finishedAt)],
    ['worker', job.workerId ?? '-'],
    ['lease expires at', instant(job.leaseExpiresAt)],
  ]
  const width = Math.max(...fields.map(([label]) => label.length)) + 2
  const lines = fields.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`)
  lines.push('payload:', indent(JSON.stringify(job.payload, null, 2)))
  lines.push(
    job.state === 'completed' && job.lastError !== null
      ? 'last error (of an earlier attempt; the job then completed):'
      : 'last error:',
    job.lastError === null ? indent('-') : indent(describeError(job.lastError)),
  )
  lines.push('result:', indent(job.result === null ? '-' : JSON.stringify(job.result, null, 2)))
  lines.push(
    job.logs.length === 0 ? 'logs:' : `logs (the last ${countOf(job.logs.length, 'line')} kept):`,
    job.logs.length === 0 ? indent('-') : indent(job.logs.map(printable).join('\n')),
  )
  return `${lines.join('\n')}\n`
}

function describeBackoff(backoff: JobBackoff): string {
  switch (backoff.type) {
    case 'fixed':
      return `fixed ${formatDuration(backoff.delayMs)}`
    case 'exponential':
      return `exponential from ${formatDuration(backoff.baseMs)}, x${backoff.factor}, at most ${formatDuration(backoff.maxMs)}`
    case 'list':
      return `the list ${backoff.delaysMs.map(formatDuration).join(', ')} (the last repeated)`
  }
}

function describeError(error: JobError): string {
  const lines = [`${error.kind}${error.name === undefined ? '' : ` (${error.name})`}: ${error.message}`]
  if (error.exitCode != null) lines.push(`exit code: ${error.exitCode}`)
  if (error.signal != null) lines.push(`signal: ${error.signal}`)
  if (error.timeoutMs !== undefined) lines.push(`timeout: ${formatDuration(error.timeoutMs)}`)
  if (error.stderrTail !== undefined && error.stderrTail !== '')
    lines.push('stderr (last lines):', indent(error.stderrTail))
  if (error.stack !== undefined) lines.push('stack:', indent(error.stack))
  return lines.join('\n')
}

/**
 * A log line as a terminal may show it: a handler wrote it, perhaps from what a user sent, so its
 * control characters (an escape sequence could rewrite the screen) are shown escaped, as JSON does.
 */
function printable(line: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  return line.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => JSON.stringify(c).slice(1, -1))
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n')
}
