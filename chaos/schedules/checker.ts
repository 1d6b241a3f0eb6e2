/**
 * The offline checker of a schedules chaos run: a pure function of the supervisor's history (every
 * spawn, ready, kill and exit, on its clock), the schedulers' histories, and the store's jobs and
 * schedules as dumped after the run. For every schedule:
 * - no slot has two jobs, nor a slot's unique key; every job is of a slot of its schedule, after
 *   the schedule's creation, enqueued no earlier than its slot, under the slot's key
 * - skip: every job is on time (late=false)
 * - once: a job after slots that were not fired is late, and a job right after the last one fired
 *   (or after the creation) is on time, unless it was enqueued more than ON_TIME_GRACE_MS late;
 *   no slot is left neither fired nor coalesced into a later job
 * - all: every slot from the creation to the end of the run has its job; a job is late only if it
 *   was enqueued once the next slot had come, or past the grace
 * - a live scheduler never misses a slot: a slot passed over (skip), coalesced (once) or fired late
 *   (all) must not lie in a stretch from the slot to `liveMarginMs` after it during which one
 *   scheduler process was ready throughout. Ready from when the supervisor heard so, until the
 *   kill or stop was sent: both err towards a scheduler that was not there, so only certain misses
 *   count.
 * Times in the store (a job's createdAt, a schedule's) are the store's clock: the writing process's
 * for SQLite, the server's for PostgreSQL and Redis; the run keeps them all on one host.
 *
 *   tsx chaos/check.ts <dir>
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

import { CronSchedule, ON_TIME_GRACE_MS, slotKey } from '../../src/core/cron.js'
import type { Job } from '../../src/core/job.js'
import type { Schedule } from '../../src/store/store.js'
import { markdownTable, verdictLines, ViolationList } from '../checker.js'
import { historyFiles, readHistory } from '../history.js'
import type { SchedulerRecord } from './scheduler-process.js'
import type { ScheduleChaosMeta, ScheduleNemesisRecord } from './supervisor.js'

export interface ScheduleRun {
  meta: ScheduleChaosMeta
  nemesis: ScheduleNemesisRecord[]
  /** Each scheduler process's history, one per incarnation. */
  schedulers: SchedulerRecord[][]
  /** The store's schedules after the run; null when they were not dumped. */
  schedules: Schedule[] | null
  jobs: Job[]
}

export interface ScheduleCounts {
  id: string
  cron: string
  missed: Schedule['missed']
  /** Slots from the schedule's creation to the end of the checked window. */
  slots: number
  jobs: number
  onTime: number
  late: number
  /** Slots with no job of their own: passed over (skip), coalesced into a later job (once). */
  unfired: number
  /** Slots not fired on time (unfired, or fired late) when no scheduler was ready at the slot. */
  missedNoneReady: number
  /** … when one was ready at the slot, but killed within the live margin. */
  missedKilled: number
}

export interface ScheduleCheckResult {
  schedules: ScheduleCounts[]
  kills: number
  /** Kills that took every scheduler down at once. */
  outages: number
  /** Processes started after the first ones. */
  restarts: number
  /** How long no scheduler was ready, from the first one ready to the stop. */
  noneReadyMs: number
  /** Fires the store accepted, by the schedulers' histories (a fire of a killed process may be missing). */
  fires: number
  /** Worker errors the schedulers reported (a store call that failed and was retried). */
  schedulerErrors: number
  violations: string[]
}

/** One scheduler process, from when the supervisor heard it was ready to when it was killed or stopped. */
interface Life {
  id: string
  pid: number
  readyAt: number
  endAt: number
  errors: number[]
}

const iso = (t: number): string => new Date(t).toISOString()

export function checkScheduleRun(run: ScheduleRun): ScheduleCheckResult {
  const { meta, nemesis, jobs } = run
  const violations = new ViolationList()
  if (run.schedules === null) violations.add('dump', 'there is no dump of the schedules')
  if (meta.settledAt === null) violations.add('settle', 'the schedulers were not all ready after the kills')

  // ── processes ──
  const errorsOf = new Map<number, number[]>()
  let fires = 0
  let schedulerErrors = 0
  for (const records of run.schedulers) {
    const hello = records.find((r) => r.e === 'hello')
    const errors: number[] = []
    for (const r of records) {
      if (r.e === 'fired' && r.outcome === 'fired') fires++
      if (r.e === 'error') errors.push(r.t)
    }
    schedulerErrors += errors.length
    if (hello?.e === 'hello') errorsOf.set(hello.pid, errors)
  }
  const byPid = new Map<number, { id: string; readyAt?: number; endAt: number }>()
  let kills = 0
  let outages = 0
  let spawns = 0
  for (const entry of nemesis) {
    switch (entry.e) {
      case 'spawn':
        spawns++
        byPid.set(entry.pid, { id: `${entry.name}#${entry.incarnation}`, endAt: meta.stopAt })
        break
      case 'ready': {
        const life = byPid.get(entry.pid)
        if (life !== undefined) life.readyAt = entry.t
        break
      }
      case 'kill':
      case 'exit': {
        if (entry.e === 'kill') kills++
        const life = byPid.get(entry.pid)
        if (life !== undefined) life.endAt = Math.min(life.endAt, entry.t)
        if (entry.e === 'exit' && !entry.expected) {
          violations.add(
            'crash',
            `scheduler ${entry.name}#${entry.incarnation} (pid ${entry.pid}) exited by itself: code ${entry.code}, signal ${entry.signal}`,
          )
        }
        break
      }
      case 'outage':
        outages++
        break
    }
  }
  const lives: Life[] = []
  for (const [pid, { id, readyAt, endAt }] of byPid) {
    if (readyAt !== undefined && readyAt < endAt) {
      lives.push({ id, pid, readyAt, endAt, errors: errorsOf.get(pid) ?? [] })
    }
  }
  const readyThrough = (from: number, to: number): Life | undefined =>
    lives.find((life) => life.readyAt <= from && life.endAt >= to)
  const readyAt = (t: number): boolean => lives.some((life) => life.readyAt <= t && life.endAt >= t)

  // ── jobs ──
  const known = new Map((run.schedules ?? []).map((schedule) => [schedule.id, schedule]))
  const jobsOf = new Map<string, Job[]>()
  for (const job of jobs) {
    if (job.schedule === null || !known.has(job.schedule.id)) {
      violations.add('phantom', `job ${job.id} (key ${job.uniqueKey}) is of no schedule of the run`)
      continue
    }
    jobsOf.set(job.schedule.id, [...(jobsOf.get(job.schedule.id) ?? []), job])
  }
  const until = meta.stopAt - meta.endMarginMs
  const counts = [...known.values()].map((schedule) =>
    checkSchedule(schedule, jobsOf.get(schedule.id) ?? [], until, violations, (slot, what) => {
      const live = readyThrough(slot, slot + meta.liveMarginMs)
      if (live === undefined) return readyAt(slot) ? 'killed' : 'none-ready'
      const errors = live.errors.filter((t) => t >= slot - meta.liveMarginMs && t <= slot + meta.liveMarginMs)
      violations.add(
        'missed',
        `${schedule.id} slot ${iso(slot)} was ${what}, though scheduler ${live.id} (pid ${live.pid}) was ` +
          `ready from ${iso(live.readyAt)} to ${iso(live.endAt)}` +
          (errors.length > 0 ? ` (it reported ${errors.length} worker errors around the slot)` : ''),
      )
      return 'live'
    }),
  )

  return {
    schedules: counts,
    kills,
    outages,
    restarts: Math.max(0, spawns - meta.schedulers),
    noneReadyMs: noneReadyMs(lives, meta.stopAt),
    fires,
    schedulerErrors,
    violations: violations.list(),
  }
}

/**
 * The checks of one schedule; `missed(slot, what)` is told of each slot not fired on time, and
 * says whether a scheduler was ready at it (and reports one ready throughout).
 */
function checkSchedule(
  schedule: Schedule,
  jobs: readonly Job[],
  until: number,
  violations: ViolationList,
  missed: (slot: number, what: string) => 'none-ready' | 'killed' | 'live',
): ScheduleCounts {
  const { id } = schedule
  const cron = new CronSchedule(schedule.cron, schedule.timeZone)
  const counts: ScheduleCounts = {
    id,
    cron: schedule.cron,
    missed: schedule.missed,
    slots: 0,
    jobs: jobs.length,
    onTime: 0,
    late: 0,
    unfired: 0,
    missedNoneReady: 0,
    missedKilled: 0,
  }
  const countMissed = (slot: number, what: string): void => {
    const seen = missed(slot, what)
    if (seen === 'none-ready') counts.missedNoneReady++
    else if (seen === 'killed') counts.missedKilled++
  }
  /** The slots after `after` and before `before` (exclusive), or up to and including `through`. */
  const slotsBetween = (after: number, bound: { before: number } | { through: number }): number[] => {
    const slots: number[] = []
    for (let slot = cron.nextAfter(after); slot !== null; slot = cron.nextAfter(slot)) {
      if ('before' in bound ? slot >= bound.before : slot > bound.through) break
      slots.push(slot)
    }
    return slots
  }
  counts.slots = slotsBetween(schedule.createdAt, { through: until }).length

  // Each slot's jobs, and each key's.
  const bySlot = new Map<number, Job[]>()
  const byKey = new Map<string | null, Job[]>()
  for (const job of jobs) {
    const { slot, late } = job.schedule!
    bySlot.set(slot, [...(bySlot.get(slot) ?? []), job])
    byKey.set(job.uniqueKey, [...(byKey.get(job.uniqueKey) ?? []), job])
    if (late) counts.late++
    else counts.onTime++
    if (cron.nextAfter(slot - 1) !== slot)
      violations.add('slot', `${id}: job ${job.id} is of ${iso(slot)}, no slot of ${schedule.cron}`)
    if (slot <= schedule.createdAt)
      violations.add(
        'slot',
        `${id}: job ${job.id} is of ${iso(slot)}, before the schedule was created (${iso(schedule.createdAt)})`,
      )
    if (job.createdAt < slot)
      violations.add(
        'early',
        `${id} slot ${iso(slot)}: job ${job.id} was enqueued ${slot - job.createdAt} ms before its slot`,
      )
    if (job.uniqueKey !== slotKey(id, slot))
      violations.add(
        'key',
        `${id} slot ${iso(slot)}: job ${job.id} has key ${job.uniqueKey}, not ${slotKey(id, slot)}`,
      )
  }
  for (const [slot, list] of bySlot) {
    if (list.length > 1)
      violations.add(
        'duplicate',
        `${id} slot ${iso(slot)} has ${list.length} jobs: ${list.map((j) => j.id).join(', ')}`,
      )
  }
  for (const [key, list] of byKey) {
    if (list.length > 1 && new Set(list.map((j) => j.schedule!.slot)).size > 1)
      violations.add(
        'duplicate',
        `${id}: key ${key} is held by ${list.length} jobs: ${list.map((j) => j.id).join(', ')}`,
      )
  }
  const fired = [...bySlot.entries()]
    .sort(([a], [b]) => a - b)
    .map(([slot, list]) => ({ slot, job: list[0]! }))

  switch (schedule.missed) {
    case 'skip': {
      for (const { slot, job } of fired) {
        if (job.schedule!.late)
          violations.add('late', `${id} slot ${iso(slot)}: job ${job.id} is late; skip fires only on time`)
      }
      for (const slot of slotsBetween(schedule.createdAt, { through: until })) {
        if (bySlot.has(slot)) continue
        counts.unfired++
        countMissed(slot, 'passed over')
      }
      break
    }
    case 'once': {
      let previous = schedule.createdAt
      for (const { slot, job } of fired) {
        const gap = slotsBetween(previous, { before: slot })
        const { late } = job.schedule!
        if (gap.length > 0 && !late) {
          violations.add(
            'late',
            `${id} slot ${iso(slot)}: job ${job.id} is on time, but ${gap.length} slot(s) before it were not fired (from ${iso(gap[0]!)})`,
          )
        }
        if (gap.length === 0 && late && job.createdAt - slot <= ON_TIME_GRACE_MS) {
          violations.add(
            'late',
            `${id} slot ${iso(slot)}: job ${job.id} is late, but the slot before it was fired and it was enqueued ${job.createdAt - slot} ms after its slot`,
          )
        }
        for (const missedSlot of gap) {
          counts.unfired++
          countMissed(missedSlot, `coalesced into ${iso(slot)}`)
        }
        previous = slot
      }
      for (const slot of slotsBetween(previous, { through: until })) {
        counts.unfired++
        violations.add('lost', `${id} slot ${iso(slot)} was neither fired nor coalesced into a later job`)
      }
      break
    }
    case 'all': {
      for (const slot of slotsBetween(schedule.createdAt, { through: until })) {
        if (!bySlot.has(slot)) {
          counts.unfired++
          violations.add('lost', `${id} slot ${iso(slot)} has no job`)
        }
      }
      for (const { slot, job } of fired) {
        if (!job.schedule!.late) continue
        countMissed(slot, 'fired late')
        const next = cron.nextAfter(slot)
        if ((next === null || job.createdAt < next) && job.createdAt - slot <= ON_TIME_GRACE_MS) {
          violations.add(
            'late',
            `${id} slot ${iso(slot)}: job ${job.id} is late, but it was enqueued ${job.createdAt - slot} ms after its slot, before the next`,
          )
        }
      }
      break
    }
  }
  return counts
}

/** How long no scheduler was ready, from the first one ready until `end`. */
function noneReadyMs(lives: readonly Life[], end: number): number {
  const sorted = [...lives].sort((a, b) => a.readyAt - b.readyAt)
  if (sorted.length === 0) return 0
  let gaps = 0
  let coveredTo = sorted[0]!.readyAt
  for (const life of sorted) {
    if (life.readyAt > coveredTo) gaps += life.readyAt - coveredTo
    coveredTo = Math.max(coveredTo, life.endAt)
  }
  return gaps + Math.max(0, end - coveredTo)
}

/** A kept run's files, as checkScheduleRun takes them. */
export function readScheduleRun(dir: string): ScheduleRun {
  const schedulesPath = join(dir, 'schedules.json')
  return {
    meta: JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as ScheduleChaosMeta,
    nemesis: readHistory<ScheduleNemesisRecord>(join(dir, 'nemesis.ndjson')),
    schedulers: historyFiles(dir, 'scheduler-').map((file) => readHistory<SchedulerRecord>(file)),
    schedules: existsSync(schedulesPath)
      ? (JSON.parse(readFileSync(schedulesPath, 'utf8')) as Schedule[])
      : null,
    jobs: readHistory<Job>(join(dir, 'dump.ndjson')),
  }
}

/** The tables and verdict line the schedules run prints (Markdown, so docs/reliability.md can keep them). */
export function formatScheduleReport(meta: ScheduleChaosMeta, result: ScheduleCheckResult): string {
  const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`
  return [
    `chaos schedules: store ${meta.store}, seed ${meta.seed}, ${meta.durationMs / 1000} s of kills, ` +
      `${meta.schedulers} scheduler processes, a slot missed by one ready for ${meta.liveMarginMs} ms after it fails the run`,
    '',
    ...markdownTable(
      ['count', 'value'],
      [
        ['kills (SIGKILL within 100 ms of a slot boundary)', result.kills],
        ['outages (every scheduler killed at once)', result.outages],
        ['restarts', result.restarts],
        ['time with no scheduler ready', seconds(result.noneReadyMs)],
        ['fires accepted (schedulers’ histories)', result.fires],
        ['worker errors in the schedulers', result.schedulerErrors],
      ],
    ),
    '',
    ...markdownTable(
      [
        'schedule',
        'missed',
        'slots',
        'jobs',
        'on time',
        'late',
        'not fired',
        'missed, none ready',
        `missed, killed within ${meta.liveMarginMs} ms`,
      ],
      result.schedules.map((c) => [
        `${c.id} (${c.cron})`,
        c.missed,
        c.slots,
        c.jobs,
        c.onTime,
        c.late,
        c.unfired,
        c.missedNoneReady,
        c.missedKilled,
      ]),
    ),
    '',
    ...verdictLines(result.violations, meta.seed),
  ].join('\n')
}
