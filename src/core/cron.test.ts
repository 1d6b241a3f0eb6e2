import assert from 'node:assert/strict'
import { test } from 'node:test'

import { ValidationError } from './errors.js'
import {
  CATCH_UP_BATCH,
  CATCH_UP_WINDOW_MS,
  CronSchedule,
  MISSED_POLICIES,
  ON_TIME_GRACE_MS,
  planFire,
  slotKey,
  type FirePlan,
  type MissedPolicy,
} from './cron.js'

const ms = (iso: string): number => Date.parse(iso)
const isos = (slots: number[]): string[] => slots.map((slot) => new Date(slot).toISOString())

// nextAfter, newestIn, upcoming

test('nextAfter is strictly after, to the millisecond', () => {
  const everySecond = new CronSchedule('* * * * * *')
  assert.equal(everySecond.nextAfter(ms('2026-01-01T10:00:00.000Z')), ms('2026-01-01T10:00:01.000Z'))
  assert.equal(everySecond.nextAfter(ms('2026-01-01T10:00:00.999Z')), ms('2026-01-01T10:00:01.000Z'))
  assert.equal(everySecond.nextAfter(ms('2026-01-01T09:59:59.999Z')), ms('2026-01-01T10:00:00.000Z'))
})

test('newestIn includes atMs and excludes afterMs', () => {
  const hourly = new CronSchedule('0 * * * *')
  const ten = ms('2026-01-01T10:00:00Z')
  assert.equal(hourly.newestIn(ten - 1, ten), ten)
  assert.equal(hourly.newestIn(ten, ten), null)
  assert.equal(hourly.newestIn(ten, ten + 3_599_999), null)
  assert.equal(hourly.newestIn(ten - 1, ten + 3_599_999), ten)
  assert.equal(hourly.newestIn(ten + 1, ten), null)
  assert.equal(hourly.newestIn(0, ten + 500), ten)
})

test('newestIn finds the newest slot of a per-second schedule a year back in one search', () => {
  const everySecond = new CronSchedule('* * * * * *')
  const at = ms('2026-06-01T12:00:00.750Z')
  assert.equal(everySecond.newestIn(at - 365 * CATCH_UP_WINDOW_MS, at), ms('2026-06-01T12:00:00.000Z'))
})

test('a pattern that never matches again has no next slot', () => {
  const once2030 = new CronSchedule('0 0 0 1 1 * 2030')
  assert.equal(once2030.nextAfter(ms('2026-01-01T00:00:00Z')), ms('2030-01-01T00:00:00Z'))
  assert.equal(once2030.nextAfter(ms('2030-01-01T00:00:00Z')), null)
  assert.deepEqual(isos(once2030.upcoming(ms('2026-01-01T00:00:00Z'), 3)), ['2030-01-01T00:00:00.000Z'])
  assert.equal(once2030.newestIn(0, ms('2040-01-01T00:00:00Z')), ms('2030-01-01T00:00:00Z'))
})

test('upcoming lists the next slots in order, none for a count of 0', () => {
  const nightly = new CronSchedule('0 2 * * *', 'Europe/London')
  assert.deepEqual(isos(nightly.upcoming(ms('2026-01-01T12:00:00Z'), 3)), [
    '2026-01-02T02:00:00.000Z',
    '2026-01-03T02:00:00.000Z',
    '2026-01-04T02:00:00.000Z',
  ])
  assert.deepEqual(nightly.upcoming(ms('2026-01-01T12:00:00Z'), 0), [])
})

// planFire

const hourly = new CronSchedule('0 * * * *')
const H10 = ms('2026-01-01T10:00:00Z')
const H11 = ms('2026-01-01T11:00:00Z')
const H12 = ms('2026-01-01T12:00:00Z')
const H13 = ms('2026-01-01T13:00:00Z')
const H14 = ms('2026-01-01T14:00:00Z')

const plans = (lastSlot: number, now: number): Record<MissedPolicy, FirePlan | null> => ({
  skip: planFire(hourly, 'skip', lastSlot, now),
  once: planFire(hourly, 'once', lastSlot, now),
  all: planFire(hourly, 'all', lastSlot, now),
})

test('MISSED_POLICIES lists the three policies', () => {
  assert.deepEqual(MISSED_POLICIES, ['skip', 'once', 'all'])
})

test('planFire returns null for every policy when no slot is due', () => {
  for (const now of [H10, H10 + 1, H11 - 1]) {
    assert.deepEqual(plans(H10, now), { skip: null, once: null, all: null })
  }
  assert.deepEqual(plans(H11, H10), { skip: null, once: null, all: null }, 'now before lastSlot')
})

test('planFire fires one on-time slot the same way under every policy', () => {
  const plan = { toSlot: H11, fire: [{ slot: H11, late: false }], more: false }
  assert.deepEqual(plans(H10, H11), { skip: plan, once: plan, all: plan })
  assert.deepEqual(plans(H10, H11 + ON_TIME_GRACE_MS), { skip: plan, once: plan, all: plan }, 'at the grace')
})

test('planFire: a slot later than the grace is passed over by skip, fired late by once and all', () => {
  const late = { toSlot: H11, fire: [{ slot: H11, late: true }], more: false }
  for (const now of [H11 + ON_TIME_GRACE_MS + 1, H11 + 5 * 60_000, H12 - 1]) {
    assert.deepEqual(plans(H10, now), { skip: { toSlot: H11, fire: [], more: false }, once: late, all: late })
  }
})

test('planFire: several due slots, the newest on time', () => {
  const now = H14 + 10_000
  assert.deepEqual(plans(H10, now), {
    skip: { toSlot: H14, fire: [{ slot: H14, late: false }], more: false },
    once: { toSlot: H14, fire: [{ slot: H14, late: true }], more: false },
    all: {
      toSlot: H14,
      fire: [
        { slot: H11, late: true },
        { slot: H12, late: true },
        { slot: H13, late: true },
        { slot: H14, late: false },
      ],
      more: false,
    },
  })
})

test('planFire: several due slots, the newest late too', () => {
  const now = H14 + 30 * 60_000
  assert.deepEqual(plans(H10, now), {
    skip: { toSlot: H14, fire: [], more: false },
    once: { toSlot: H14, fire: [{ slot: H14, late: true }], more: false },
    all: {
      toSlot: H14,
      fire: [H11, H12, H13, H14].map((slot) => ({ slot, late: true })),
      more: false,
    },
  })
})

test("planFire 'all' fires CATCH_UP_BATCH slots per plan, says more, and ends with the newest on time", () => {
  const everyMinute = new CronSchedule('* * * * *')
  const now = H10 + 300 * 60_000 + 5_000 // 300 slots due: 10:01 to 15:00
  let lastSlot = H10
  const fired: { slot: number; late: boolean }[] = []
  const sizes: number[] = []
  for (;;) {
    const plan = planFire(everyMinute, 'all', lastSlot, now)
    assert.ok(plan !== null)
    assert.equal(plan.toSlot, plan.fire.at(-1)?.slot)
    fired.push(...plan.fire)
    sizes.push(plan.fire.length)
    lastSlot = plan.toSlot
    if (!plan.more) break
  }
  assert.deepEqual(sizes, [CATCH_UP_BATCH, CATCH_UP_BATCH, CATCH_UP_BATCH])
  assert.deepEqual(
    fired.map((entry) => entry.slot),
    Array.from({ length: 300 }, (_, i) => H10 + (i + 1) * 60_000),
  )
  assert.deepEqual(
    fired.map((entry) => entry.late),
    fired.map((_, i) => i < 299),
  )
  assert.equal(planFire(everyMinute, 'all', lastSlot, now), null)
})

test("planFire 'all' passes over due slots older than CATCH_UP_WINDOW_MS", () => {
  const lastSlot = ms('2026-01-01T00:00:00Z')
  const now = ms('2026-01-04T00:00:30Z')
  const plan = planFire(hourly, 'all', lastSlot, now)
  assert.ok(plan !== null)
  assert.deepEqual(
    isos(plan.fire.map((entry) => entry.slot)),
    isos(Array.from({ length: 24 }, (_, i) => ms('2026-01-03T01:00:00Z') + i * 3_600_000)),
  )
  assert.equal(plan.toSlot, ms('2026-01-04T00:00:00Z'))
  assert.equal(plan.more, false)
  assert.deepEqual(plan.fire.at(-1), { slot: ms('2026-01-04T00:00:00Z'), late: false })
  assert.ok(plan.fire.slice(0, -1).every((entry) => entry.late))
})

test("planFire 'all': a slot exactly CATCH_UP_WINDOW_MS old is passed over, one newer is fired", () => {
  const now = ms('2026-01-04T00:00:00Z')
  const plan = planFire(hourly, 'all', ms('2026-01-01T00:00:00Z'), now)
  assert.ok(plan !== null)
  assert.equal(plan.fire[0]!.slot, now - CATCH_UP_WINDOW_MS + 3_600_000)
  assert.equal(plan.fire.length, 24)
})

test("planFire 'all' with every due slot outside the window fires nothing and moves past them", () => {
  const mondays = new CronSchedule('0 0 * * 1')
  const lastSlot = ms('2026-01-05T00:00:00Z') // a Monday
  const now = ms('2026-01-15T00:00:00Z') // Thursday: Monday the 12th was 3 days ago
  assert.deepEqual(planFire(mondays, 'all', lastSlot, now), {
    toSlot: ms('2026-01-12T00:00:00Z'),
    fire: [],
    more: false,
  })
})

test('planFire on a per-second schedule a week behind plans a few slots, not every slot due', () => {
  // 604,800 slots are due; enumerating them would take minutes, so this test passing in its
  // ordinary time is the check.
  const everySecond = new CronSchedule('* * * * * *')
  const lastSlot = ms('2026-01-01T12:00:00Z')
  const now = ms('2026-01-08T12:00:00.250Z')
  const newest = ms('2026-01-08T12:00:00Z')
  assert.deepEqual(planFire(everySecond, 'skip', lastSlot, now), {
    toSlot: newest,
    fire: [{ slot: newest, late: false }],
    more: false,
  })
  assert.deepEqual(planFire(everySecond, 'once', lastSlot, now), {
    toSlot: newest,
    fire: [{ slot: newest, late: true }],
    more: false,
  })
  const all = planFire(everySecond, 'all', lastSlot, now)
  assert.ok(all !== null)
  const first = ms('2026-01-07T12:00:01Z') // the first whole second after now - 24 h
  assert.deepEqual(
    all.fire,
    Array.from({ length: CATCH_UP_BATCH }, (_, i) => ({ slot: first + i * 1000, late: true })),
  )
  assert.equal(all.toSlot, first + (CATCH_UP_BATCH - 1) * 1000)
  assert.equal(all.more, true)
})

test("planFire 'once' is not late for a single due slot fired within the grace", () => {
  const everySecond = new CronSchedule('* * * * * *')
  const slot = ms('2026-01-01T12:00:01Z')
  assert.deepEqual(planFire(everySecond, 'once', slot - 1000, slot + 999), {
    toSlot: slot,
    fire: [{ slot, late: false }],
    more: false,
  })
})

test('planFire refuses an unknown policy', () => {
  assert.throws(
    () => planFire(hourly, 'later' as MissedPolicy, H10, H14),
    (error: unknown) => error instanceof ValidationError && error.field === 'policy',
  )
})

// Validation

const refuses = (field: string, includes: string) => (error: unknown) =>
  error instanceof ValidationError &&
  error.code === 'invalid_option' &&
  error.field === field &&
  error.message.includes(includes)

test('refuses a bad expression on field cron, with croner’s reason', () => {
  assert.throws(() => new CronSchedule('61 * * * *'), refuses('cron', 'minute'))
  assert.throws(() => new CronSchedule('* * * *'), refuses('cron', 'five, six, or seven'))
  assert.throws(() => new CronSchedule('every day'), refuses('cron', 'not a cron pattern'))
  assert.throws(() => new CronSchedule(''), refuses('cron', 'not a cron pattern'))
  assert.throws(() => new CronSchedule('@reboot'), refuses('cron', '@reboot'))
  assert.throws(() => new CronSchedule(7 as unknown as string), refuses('cron', 'must be a string'))
})

test('refuses a pattern that matches no time at all', () => {
  assert.throws(() => new CronSchedule('0 0 30 2 *'), refuses('cron', 'matches no time'))
})

test('refuses an unknown time zone on field timeZone', () => {
  assert.throws(() => new CronSchedule('0 2 * * *', 'Mars/Base'), refuses('timeZone', 'Mars/Base'))
  assert.throws(() => new CronSchedule('0 2 * * *', ''), refuses('timeZone', 'IANA'))
})

test('accepts 5 fields, 6 with leading seconds, 7 with a year, and nicknames', () => {
  const from = ms('2026-01-01T00:00:00Z')
  assert.deepEqual(isos(new CronSchedule('*/2 * * * * *').upcoming(from, 2)), [
    '2026-01-01T00:00:02.000Z',
    '2026-01-01T00:00:04.000Z',
  ])
  assert.equal(new CronSchedule('0 30 2 * * *').nextAfter(from), ms('2026-01-01T02:30:00Z'))
  assert.equal(new CronSchedule('30 2 * * *').nextAfter(from), ms('2026-01-01T02:30:00Z'))
  assert.equal(new CronSchedule('0 0 0 1 1 * 2027').nextAfter(from), ms('2027-01-01T00:00:00Z'))
  assert.equal(new CronSchedule('@daily').nextAfter(from), ms('2026-01-02T00:00:00Z'))
  const schedule = new CronSchedule('30 2 * * *', 'Europe/London')
  assert.equal(schedule.cron, '30 2 * * *')
  assert.equal(schedule.timeZone, 'Europe/London')
  assert.equal(new CronSchedule('30 2 * * *').timeZone, 'UTC')
})

test('refuses an expression longer than 200 characters', () => {
  const padded = (length: number) => '0 2 * * *'.padEnd(length, ' ')
  assert.equal(new CronSchedule(padded(200)).nextAfter(0), ms('1970-01-01T02:00:00Z'))
  assert.throws(() => new CronSchedule(padded(201)), refuses('cron', '201 characters'))
})

test('refuses an ISO date string, which croner would run once', () => {
  for (const date of ['2026-12-03T02:00:00', '2026-12-03T02:00:00Z', '2026-12-03 02:00']) {
    assert.throws(() => new CronSchedule(date), refuses('cron', 'is a date'), date)
  }
})

// slotKey

test('slotKey is cron:<id>:<slot as UTC ISO 8601 with milliseconds>', () => {
  assert.equal(slotKey('nightly', ms('2026-12-03T02:00:00Z')), 'cron:nightly:2026-12-03T02:00:00.000Z')
  assert.equal(
    slotKey('per-second', ms('2026-12-03T02:00:01.000+01:00')),
    'cron:per-second:2026-12-03T01:00:01.000Z',
  )
})
