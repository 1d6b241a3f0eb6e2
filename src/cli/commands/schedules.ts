import type { Command } from 'commander'
import {
  listSchedules,
  pauseSchedule,
  putSchedule,
  removeSchedule,
  resumeSchedule,
  runScheduleNow,
  type ScheduleReport,
} from '../../admin/schedules.js'
import { withStore } from '../../admin/with-store.js'
import { ValidationError } from '../../core/errors.js'
import {
  MISSED_POLICIES,
  OVERLAP_POLICIES,
  type MissedPolicy,
  type OverlapPolicy,
} from '../../core/schedule.js'
import { formatInstant, formatJson, formatTable, toIso } from '../format.js'
import { existingStore } from '../open.js'
import { parsePayload } from './enqueue.js'

interface AddFlags {
  cron: string
  tz?: string
  job: string
  payload?: string
  queue?: string
  missed?: string
  overlap?: string
}

/** `ferry schedules add|list|remove|pause|resume|run-now`: durable cron schedules (docs/schedules.md). */
export function registerSchedules(program: Command): void {
  const schedules = program
    .command('schedules')
    .description('durable cron schedules, fired by every worker that runs a scheduler, each slot once')

  schedules
    .command('add')
    .description('create a schedule, or replace the definition of the one with this id')
    .argument('<id>', 'the schedule id (letters, digits, . _ : -)')
    .requiredOption('--cron <expr>', "a cron expression: 5 fields, or 6 with seconds first ('*/2 * * * * *')")
    .option('--tz <zone>', 'the IANA time zone the expression reads in (default UTC)')
    .requiredOption('--job <name>', 'the name of the job each slot enqueues')
    .option('--payload <json>', 'its payload, as JSON (default null)')
    .option('--queue <queue>', 'its queue (default: default)')
    .option(
      '--missed <policy>',
      `slots missed while no scheduler ran: ${MISSED_POLICIES.join(', ')} (default skip)`,
    )
    .option(
      '--overlap <policy>',
      `a slot while the last run goes on: ${OVERLAP_POLICIES.join(', ')} (default allow)`,
    )
    .action(async (id: string, flags: AddFlags) => {
      if (flags.missed !== undefined) assertPolicy(flags.missed, '--missed', MISSED_POLICIES)
      if (flags.overlap !== undefined) assertPolicy(flags.overlap, '--overlap', OVERLAP_POLICIES)
      const options = {
        id,
        cron: flags.cron,
        ...(flags.tz === undefined ? {} : { timeZone: flags.tz }),
        job: {
          name: flags.job,
          payload: flags.payload === undefined ? null : parsePayload(flags.payload, '--payload'),
          ...(flags.queue === undefined ? {} : { queue: flags.queue }),
        },
        ...(flags.missed === undefined ? {} : { missed: flags.missed as MissedPolicy }),
        ...(flags.overlap === undefined ? {} : { overlap: flags.overlap as OverlapPolicy }),
      }
      const schedule = await withStore(existingStore(program), (store) => putSchedule(store, options))
      process.stdout.write(`schedule ${schedule.id}: ${describe(schedule, Date.now())}\n`)
    })

  schedules
    .command('list')
    .description('every schedule, with its next slots')
    .option('--json', 'print a JSON document (shape in docs/cli.md)')
    .action(async (flags: { json?: boolean }) => {
      const reports = await withStore(existingStore(program), (store) => listSchedules(store))
      if (flags.json === true) {
        process.stdout.write(formatJson(reports.map(toJson)))
        return
      }
      if (reports.length === 0) {
        process.stdout.write('no schedules (add one with `ferry schedules add`)\n')
        return
      }
      const now = Date.now()
      process.stdout.write(
        formatTable(
          ['ID', 'CRON', 'ZONE', 'JOB', 'QUEUE', 'NEXT', 'LAST JOB', 'POLICIES'],
          reports.map((s) => [
            s.id,
            s.cron,
            s.timeZone,
            s.job.name,
            s.job.queue,
            s.pausedAt !== null ? `paused ${formatInstant(s.pausedAt, now)}` : next(s, now),
            s.lastJobId ?? '-',
            `missed ${s.missed}, overlap ${s.overlap}`,
          ]),
        ),
      )
    })

  schedules
    .command('remove')
    .description('delete a schedule (the jobs it fired stay)')
    .argument('<id>', 'the schedule id')
    .action(async (id: string) => {
      await withStore(existingStore(program), (store) => removeSchedule(store, id))
      process.stdout.write(`removed schedule ${id}\n`)
    })

  schedules
    .command('pause')
    .description('stop firing a schedule until it is resumed')
    .argument('<id>', 'the schedule id')
    .action(async (id: string) => {
      await withStore(existingStore(program), (store) => pauseSchedule(store, id))
      process.stdout.write(`paused schedule ${id}: no slot fires until \`ferry schedules resume ${id}\`\n`)
    })

  schedules
    .command('resume')
    .description('fire a paused schedule again, from now (the slots passed while paused are not fired)')
    .argument('<id>', 'the schedule id')
    .action(async (id: string) => {
      const schedule = await withStore(existingStore(program), (store) => resumeSchedule(store, id))
      process.stdout.write(`resumed schedule ${id}: ${next(schedule, Date.now())}\n`)
    })

  schedules
    .command('run-now')
    .description("enqueue a schedule's job now, outside its slots")
    .argument('<id>', 'the schedule id')
    .action(async (id: string) => {
      const jobId = await withStore(existingStore(program), (store) => runScheduleNow(store, id))
      process.stdout.write(`enqueued job ${jobId} of schedule ${id}\n`)
    })
}

function next(schedule: ScheduleReport, now: number): string {
  const [first] = schedule.upcoming
  return first === undefined ? 'no slot ahead' : `next ${formatInstant(first, now)}`
}

function describe(schedule: ScheduleReport, now: number): string {
  return `${schedule.cron} (${schedule.timeZone}) enqueues ${schedule.job.name} on ${schedule.job.queue}, ${next(schedule, now)}`
}

function toJson(schedule: ScheduleReport): unknown {
  return {
    ...schedule,
    job: { ...schedule.job, payload: JSON.parse(schedule.job.payload) as unknown },
    pausedAt: toIso(schedule.pausedAt),
    lastSlot: toIso(schedule.lastSlot),
    createdAt: toIso(schedule.createdAt),
    updatedAt: toIso(schedule.updatedAt),
    upcoming: schedule.upcoming.map((slot) => toIso(slot)),
  }
}

/** A policy flag's value: checked here, so that the error names the flag the user wrote. */
function assertPolicy(value: string, flag: string, allowed: readonly string[]): void {
  if (!allowed.includes(value))
    throw new ValidationError('invalid_option', flag, `must be one of ${allowed.join(', ')}`)
}
