/**
 * The schedules chaos checker must catch what it claims to catch: each test hands it a small run
 * (one scheduler ready throughout and every slot fired on time, then one changed in one way) and
 * checks the verdict.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'

import {
  checkScheduleRun,
  formatScheduleReport,
  readScheduleRun,
  type ScheduleRun,
} from '../../chaos/schedules/checker.js'
import { slotKey, type MissedPolicy } from '../../src/core/cron.js'
import type { Job } from '../../src/core/job.js'
import type { Schedule } from '../../src/store/store.js'
import { dumpedJob } from './fixtures.js'

/** A whole second: the run's slots are T + n s. */
const T = Date.UTC(2026, 11, 3, 12, 0, 0)
/** The schedules are created half a second in; the run stops at T + 10.5 s (slots checked to T + 9 s). */
const CREATED = T + 500
const STOP = T + 10_500
const SKIP = 'every-second-skip'
const ONCE = 'every-2s-once'
const ALL = 'every-second-all'

function schedule(id: string, cron: string, missed: MissedPolicy): Schedule {
  return {
    id,
    cron,
    timeZone: 'UTC',
    job: {
      name: 'chaos-tick',
      queue: 'chaos-schedules',
      payload: 'null',
      priority: 0,
      maxAttempts: 25,
      timeoutMs: null,
      group: null,
      expiresInMs: null,
      backoff: null,
    },
    missed,
    overlap: 'allow',
    pausedAt: null,
    lastSlot: STOP,
    lastJobId: null,
    version: 1,
    createdAt: CREATED,
    updatedAt: CREATED,
  }
}

let nextId = 1
/** The job of a slot, enqueued 20 ms after it unless `at` says when. */
function job(id: string, slot: number, late = false, at = slot + 20): Job {
  return dumpedJob(at, {
    id: String(nextId++),
    queue: 'chaos-schedules',
    name: 'chaos-tick',
    payload: null,
    uniqueKey: slotKey(id, slot),
    schedule: { id, slot, late },
  })
}

const seconds = (from: number, to: number, step = 1): number[] =>
  Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => T + (from + i * step) * 1000)

/** One scheduler process, s1, ready from before the creation to the stop; every slot fired on time. */
function clean(): ScheduleRun {
  return {
    meta: {
      run: 'schedules',
      store: 'test',
      seed: 1,
      durationMs: 8000,
      schedulers: 1,
      liveMarginMs: 1000,
      endMarginMs: 1000,
      startedAt: T - 1000,
      faultsStartedAt: T - 300,
      faultsEndedAt: T + 8000,
      settledAt: T + 8000,
      stopAt: STOP,
      stoppedAt: STOP + 100,
    },
    nemesis: [
      { e: 'phase', phase: 'faults', t: T - 1000 },
      { e: 'spawn', name: 's1', incarnation: 1, pid: 10, t: T - 1000 },
      { e: 'ready', name: 's1', incarnation: 1, pid: 10, t: T - 300 },
      { e: 'phase', phase: 'stop', t: STOP },
      { e: 'exit', name: 's1', incarnation: 1, pid: 10, code: 0, signal: null, expected: true, t: STOP + 50 },
    ],
    schedulers: [[{ e: 'hello', pid: 10, t: T - 900 }]],
    schedules: [
      schedule(SKIP, '* * * * * *', 'skip'),
      schedule(ONCE, '*/2 * * * * *', 'once'),
      schedule(ALL, '* * * * * *', 'all'),
    ],
    jobs: [
      ...seconds(1, 10).map((slot) => job(SKIP, slot)),
      ...seconds(2, 10, 2).map((slot) => job(ONCE, slot)),
      ...seconds(1, 10).map((slot) => job(ALL, slot)),
    ],
  }
}

/** The run's jobs, less those of the schedule's slots given. */
function without(run: ScheduleRun, id: string, ...slots: number[]): Job[] {
  return run.jobs.filter((j) => !(j.schedule!.id === id && slots.includes(j.schedule!.slot)))
}

function jobOf(run: ScheduleRun, id: string, slot: number): Job {
  return run.jobs.find((j) => j.schedule!.id === id && j.schedule!.slot === slot)!
}

function assertViolation(violations: readonly string[], prefix: string): void {
  assert.ok(
    violations.some((v) => v.startsWith(prefix)),
    `expected "${prefix}…" in:\n${violations.join('\n')}`,
  )
}

test('a run where every slot fired on time, with a scheduler ready throughout, passes with its counts', () => {
  const run = clean()
  const result = checkScheduleRun(run)
  assert.deepEqual(result.violations, [])
  const skip = result.schedules.find((c) => c.id === SKIP)!
  assert.deepEqual(
    { slots: skip.slots, jobs: skip.jobs, onTime: skip.onTime, late: skip.late, unfired: skip.unfired },
    { slots: 9, jobs: 10, onTime: 10, late: 0, unfired: 0 },
  )
  assert.equal(result.schedules.find((c) => c.id === ONCE)!.slots, 4)
  assert.equal(result.noneReadyMs, 0)
  assert.match(formatScheduleReport(run.meta, result), /^verdict: PASS/m)
})

/**
 * s1 is killed 10 ms after the slot of T+3 s, before it fired it, and s2 is ready at T+6.4 s:
 * skip passes over 3, 4 and 5 and fires 6 on time; once coalesces 4 into a late 6; all fires 3, 4
 * and 5 late and 6 on time.
 */
function outage(): ScheduleRun {
  const run = clean()
  run.meta.schedulers = 2
  run.nemesis = [
    ...run.nemesis.slice(0, 3),
    { e: 'kill', name: 's1', incarnation: 1, pid: 10, t: T + 3010 },
    {
      e: 'exit',
      name: 's1',
      incarnation: 1,
      pid: 10,
      code: null,
      signal: 'SIGKILL',
      expected: true,
      t: T + 3030,
    },
    { e: 'spawn', name: 's2', incarnation: 1, pid: 11, t: T + 5500 },
    { e: 'ready', name: 's2', incarnation: 1, pid: 11, t: T + 6400 },
    { e: 'phase', phase: 'stop', t: STOP },
    { e: 'exit', name: 's2', incarnation: 1, pid: 11, code: 0, signal: null, expected: true, t: STOP + 50 },
  ]
  const late = [T + 3000, T + 4000, T + 5000]
  run.jobs = without(run, SKIP, ...late)
  run.jobs = without(run, ONCE, T + 4000, T + 6000)
  run.jobs = without(run, ALL, ...late, T + 6000)
  run.jobs.push(
    job(ONCE, T + 6000, true, T + 6450),
    ...late.map((slot) => job(ALL, slot, true, T + 6450)),
    job(ALL, T + 6000, false, T + 6450),
  )
  jobOf(run, SKIP, T + 6000).createdAt = T + 6450
  return run
}

test('slots missed while no scheduler was ready pass, counted as missed with none ready or one killed', () => {
  const result = checkScheduleRun(outage())
  assert.deepEqual(result.violations, [])
  const counts = new Map(result.schedules.map((c) => [c.id, c]))
  assert.deepEqual(
    [SKIP, ONCE, ALL].map((id) => {
      const { unfired, late, missedNoneReady, missedKilled } = counts.get(id)!
      return { id, unfired, late, missedNoneReady, missedKilled }
    }),
    [
      { id: SKIP, unfired: 3, late: 0, missedNoneReady: 2, missedKilled: 1 },
      { id: ONCE, unfired: 1, late: 1, missedNoneReady: 1, missedKilled: 0 },
      { id: ALL, unfired: 0, late: 3, missedNoneReady: 2, missedKilled: 1 },
    ],
  )
  assert.equal(result.kills, 1)
  assert.equal(result.restarts, 0)
  assert.equal(result.noneReadyMs, 6400 - 3010)
})

test('a slot passed over while a scheduler was ready from it to a second after it is a miss', () => {
  const run = clean()
  run.jobs = without(run, SKIP, T + 5000)
  const { violations } = checkScheduleRun(run)
  assertViolation(
    violations,
    'missed: every-second-skip slot 2026-12-03T12:00:05.000Z was passed over, though scheduler s1#1 (pid 10)',
  )
})

test('a slot coalesced, or fired late, while a scheduler was ready is a miss', () => {
  const run = clean()
  run.jobs = without(run, ONCE, T + 4000, T + 6000)
  run.jobs.push(job(ONCE, T + 6000, true))
  jobOf(run, ALL, T + 7000).schedule!.late = true
  const { violations } = checkScheduleRun(run)
  assertViolation(violations, 'missed: every-2s-once slot 2026-12-03T12:00:04.000Z was coalesced into')
  assertViolation(violations, 'missed: every-second-all slot 2026-12-03T12:00:07.000Z was fired late')
})

test('two jobs of one slot are a duplicate, named with the slot', () => {
  const run = clean()
  run.jobs.push(job(SKIP, T + 4000), job(ALL, T + 2000, true, T + 2500))
  const { violations } = checkScheduleRun(run)
  assertViolation(violations, 'duplicate: every-second-skip slot 2026-12-03T12:00:04.000Z has 2 jobs')
  assertViolation(violations, 'duplicate: every-second-all slot 2026-12-03T12:00:02.000Z has 2 jobs')
})

test('skip: a late job is a violation', () => {
  const run = clean()
  jobOf(run, SKIP, T + 3000).schedule!.late = true
  assertViolation(checkScheduleRun(run).violations, 'late: every-second-skip slot 2026-12-03T12:00:03.000Z')
})

test('once: an on-time job after unfired slots, or a late one right after the last, is a violation', () => {
  const run = outage()
  jobOf(run, ONCE, T + 6000).schedule!.late = false
  jobOf(run, ONCE, T + 8000).schedule!.late = true
  const { violations } = checkScheduleRun(run)
  assertViolation(violations, 'late: every-2s-once slot 2026-12-03T12:00:06.000Z')
  assert.ok(violations.some((v) => v.includes('is on time, but 1 slot(s) before it were not fired')))
  assertViolation(violations, 'late: every-2s-once slot 2026-12-03T12:00:08.000Z')
  assert.ok(violations.some((v) => v.includes('is late, but the slot before it was fired')))
})

test('once: a job fired past the grace may be late with no slot missed', () => {
  const run = clean()
  const eight = jobOf(run, ONCE, T + 8000)
  eight.schedule!.late = true
  eight.createdAt = T + 8000 + 60_001
  assert.deepEqual(checkScheduleRun(run).violations, [])
})

test('once: slots before the end that were neither fired nor coalesced are lost', () => {
  const run = clean()
  run.jobs = without(run, ONCE, T + 6000, T + 8000, T + 10_000)
  const { violations } = checkScheduleRun(run)
  assertViolation(
    violations,
    'lost: every-2s-once slot 2026-12-03T12:00:06.000Z was neither fired nor coalesced',
  )
  assertViolation(violations, 'lost: every-2s-once slot 2026-12-03T12:00:08.000Z')
})

test('all: a slot with no job is lost, and a job late though enqueued before the next slot is wrong', () => {
  const run = clean()
  run.jobs = without(run, ALL, T + 5000)
  jobOf(run, ALL, T + 6000).schedule!.late = true
  const { violations } = checkScheduleRun(run)
  assertViolation(violations, 'lost: every-second-all slot 2026-12-03T12:00:05.000Z has no job')
  assertViolation(violations, 'late: every-second-all slot 2026-12-03T12:00:06.000Z')
})

test('a job enqueued before its slot, under another key, off the cron, or of no schedule is a violation', () => {
  const run = clean()
  const [first, second, third] = run.jobs.filter((j) => j.schedule!.id === SKIP)
  first!.createdAt = first!.schedule!.slot - 5
  second!.uniqueKey = 'cron:other'
  third!.schedule!.slot += 500
  third!.uniqueKey = slotKey(SKIP, third!.schedule!.slot)
  run.jobs.push({ ...job(SKIP, T + 7000), schedule: null, uniqueKey: null })
  const { violations } = checkScheduleRun(run)
  for (const prefix of [
    'early: every-second-skip slot',
    'key: every-second-skip slot',
    'slot: every-second-skip',
    'phantom:',
  ]) {
    assertViolation(violations, prefix)
  }
})

test('a scheduler that exited by itself, and a run whose schedulers never all came back, fail', () => {
  const run = clean()
  run.nemesis.push({
    e: 'exit',
    name: 's1',
    incarnation: 1,
    pid: 10,
    code: 1,
    signal: null,
    expected: false,
    t: T + 4000,
  })
  run.meta.settledAt = null
  const { violations } = checkScheduleRun(run)
  assertViolation(violations, 'crash: scheduler s1#1 (pid 10) exited by itself: code 1')
  assertViolation(violations, 'settle:')
})

test('a kept run is read back from its files, a torn last line skipped', (t) => {
  const run = clean()
  const dir = mkdtempSync(join(tmpdir(), 'ferry-chaos-schedules-check-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const lines = (records: readonly object[]): string => records.map((r) => `${JSON.stringify(r)}\n`).join('')
  writeFileSync(join(dir, 'meta.json'), JSON.stringify(run.meta))
  writeFileSync(join(dir, 'nemesis.ndjson'), lines(run.nemesis))
  writeFileSync(join(dir, 'scheduler-s1#001.ndjson'), `${lines(run.schedulers[0]!)}{"e":"fired","sch`)
  writeFileSync(join(dir, 'schedules.json'), JSON.stringify(run.schedules))
  writeFileSync(join(dir, 'dump.ndjson'), lines(run.jobs))
  const read = readScheduleRun(dir)
  assert.deepEqual(read, run)
  assert.deepEqual(checkScheduleRun(read).violations, [])
})
