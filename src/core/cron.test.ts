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

/**
 * The 2026 transitions, from the zone rules (and checked against Node's ICU):
 * - America/New_York: 8 Mar 02:00 EST (-5) → 03:00 EDT (-4), at 07:00Z; 1 Nov 02:00 EDT → 01:00
 *   EST, at 06:00Z, so 01:00-01:59 occurs twice.
 * - Europe/London: 29 Mar 01:00 GMT → 02:00 BST (+1), at 01:00Z; 25 Oct 02:00 BST → 01:00 GMT, at
 *   01:00Z, so 01:00-01:59 occurs twice.
 * - America/Santiago, at midnight: 6 Sep 00:00 (-4) → 01:00 (-3), at 04:00Z, so 6 Sep begins at
 *   01:00; 5 Apr 00:00 (-3) → 4 Apr 23:00 (-4), at 03:00Z, so 4 Apr 23:00-23:59 occurs twice.
 * - Australia/Lord_Howe, 30 minutes: 4 Oct 02:00 (+10:30) → 02:30 (+11), at 3 Oct 15:30Z; 5 Apr
 *   02:00 (+11) → 01:30 (+10:30), at 4 Apr 15:00Z, so 01:30-01:59 occurs twice.
 * A fixed-time row lists three days: the day before, the transition day, the day after, so the job
 * runs exactly once on the transition day. An interval row spans the transition.
 */
interface DstRow {
  zone: string
  transition: 'spring forward' | 'fall back'
  cron: string
  from: string
  slots: string[]
  /** For interval jobs: the spacing every pair of neighbouring slots must have. */
  everyMs?: number
}

const QUARTER_HOUR = 15 * 60_000

const DST_TABLE: DstRow[] = [
  // America/New_York
  {
    zone: 'America/New_York',
    transition: 'spring forward',
    cron: '30 2 * * *', // 02:30 does not exist on 8 Mar: 03:00 EDT
    from: '2026-03-07T00:00:00Z',
    slots: ['2026-03-07T07:30:00.000Z', '2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z'],
  },
  {
    zone: 'America/New_York',
    transition: 'fall back',
    cron: '30 1 * * *', // 01:30 EDT, not 01:30 EST as well
    from: '2026-10-31T00:00:00Z',
    slots: ['2026-10-31T05:30:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z'],
  },
  {
    zone: 'America/New_York',
    transition: 'spring forward',
    cron: '*/15 * * * *', // 01:30, 01:45 EST, then 03:00 EDT
    from: '2026-03-08T06:20:00Z',
    slots: [
      '2026-03-08T06:30:00.000Z',
      '2026-03-08T06:45:00.000Z',
      '2026-03-08T07:00:00.000Z',
      '2026-03-08T07:15:00.000Z',
    ],
    everyMs: QUARTER_HOUR,
  },
  {
    zone: 'America/New_York',
    transition: 'fall back',
    cron: '*/15 * * * *', // 01:30, 01:45 EDT, 01:00 to 02:00 EST
    from: '2026-11-01T05:20:00Z',
    slots: [
      '2026-11-01T05:30:00.000Z',
      '2026-11-01T05:45:00.000Z',
      '2026-11-01T06:00:00.000Z',
      '2026-11-01T06:15:00.000Z',
      '2026-11-01T06:30:00.000Z',
      '2026-11-01T06:45:00.000Z',
      '2026-11-01T07:00:00.000Z',
    ],
    everyMs: QUARTER_HOUR,
  },
  {
    zone: 'America/New_York',
    transition: 'spring forward',
    cron: '0 * * * *', // hourly with a wildcard hour: 01:00 EST, 03:00 EDT
    from: '2026-03-08T05:30:00Z',
    slots: ['2026-03-08T06:00:00.000Z', '2026-03-08T07:00:00.000Z', '2026-03-08T08:00:00.000Z'],
    everyMs: 3_600_000,
  },
  {
    zone: 'America/New_York',
    transition: 'fall back',
    cron: '0 * * * *', // 01:00 EDT, 01:00 EST, 02:00 EST
    from: '2026-11-01T04:30:00Z',
    slots: ['2026-11-01T05:00:00.000Z', '2026-11-01T06:00:00.000Z', '2026-11-01T07:00:00.000Z'],
    everyMs: 3_600_000,
  },
  // A list is fixed-time too (fixedTimeRule 'no-wildcard'): its 02:30 is not lost in the gap...
  {
    zone: 'America/New_York',
    transition: 'spring forward',
    cron: '30 2,14 * * *',
    from: '2026-03-07T12:00:00Z',
    slots: [
      '2026-03-07T19:30:00.000Z',
      '2026-03-08T07:00:00.000Z',
      '2026-03-08T18:30:00.000Z',
      '2026-03-09T06:30:00.000Z',
    ],
  },
  // ...and its 01:30 runs once in the repeated hour.
  {
    zone: 'America/New_York',
    transition: 'fall back',
    cron: '30 1,14 * * *',
    from: '2026-10-31T12:00:00Z',
    slots: [
      '2026-10-31T18:30:00.000Z',
      '2026-11-01T05:30:00.000Z',
      '2026-11-01T19:30:00.000Z',
      '2026-11-02T06:30:00.000Z',
    ],
  },
  // Europe/London
  {
    zone: 'Europe/London',
    transition: 'spring forward',
    cron: '30 1 * * *', // 01:30 does not exist on 29 Mar: 02:00 BST
    from: '2026-03-28T00:00:00Z',
    slots: ['2026-03-28T01:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z'],
  },
  {
    zone: 'Europe/London',
    transition: 'fall back',
    cron: '30 1 * * *', // 01:30 BST, not 01:30 GMT as well
    from: '2026-10-24T00:00:00Z',
    slots: ['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z'],
  },
  {
    zone: 'Europe/London',
    transition: 'spring forward',
    cron: '*/15 * * * *', // 00:30, 00:45 GMT, then 02:00 BST
    from: '2026-03-29T00:20:00Z',
    slots: [
      '2026-03-29T00:30:00.000Z',
      '2026-03-29T00:45:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-29T01:15:00.000Z',
    ],
    everyMs: QUARTER_HOUR,
  },
  {
    zone: 'Europe/London',
    transition: 'fall back',
    cron: '*/15 * * * *', // 01:30, 01:45 BST, 01:00 to 02:00 GMT
    from: '2026-10-25T00:20:00Z',
    slots: [
      '2026-10-25T00:30:00.000Z',
      '2026-10-25T00:45:00.000Z',
      '2026-10-25T01:00:00.000Z',
      '2026-10-25T01:15:00.000Z',
      '2026-10-25T01:30:00.000Z',
      '2026-10-25T01:45:00.000Z',
      '2026-10-25T02:00:00.000Z',
    ],
    everyMs: QUARTER_HOUR,
  },
  // America/Santiago
  {
    zone: 'America/Santiago',
    transition: 'spring forward',
    cron: '30 0 * * *', // 00:30 does not exist on 6 Sep: 01:00 (-3), the day's first minute
    from: '2026-09-04T12:00:00Z',
    slots: ['2026-09-05T04:30:00.000Z', '2026-09-06T04:00:00.000Z', '2026-09-07T03:30:00.000Z'],
  },
  {
    zone: 'America/Santiago',
    transition: 'fall back',
    cron: '30 23 * * *', // 4 Apr 23:30 (-3), not 23:30 (-4) as well
    from: '2026-04-03T12:00:00Z',
    slots: ['2026-04-04T02:30:00.000Z', '2026-04-05T02:30:00.000Z', '2026-04-06T03:30:00.000Z'],
  },
  {
    zone: 'America/Santiago',
    transition: 'spring forward',
    cron: '*/15 * * * *', // 5 Sep 23:30, 23:45 (-4), then 6 Sep 01:00 (-3)
    from: '2026-09-06T03:20:00Z',
    slots: [
      '2026-09-06T03:30:00.000Z',
      '2026-09-06T03:45:00.000Z',
      '2026-09-06T04:00:00.000Z',
      '2026-09-06T04:15:00.000Z',
    ],
    everyMs: QUARTER_HOUR,
  },
  {
    zone: 'America/Santiago',
    transition: 'fall back',
    cron: '*/15 * * * *', // 4 Apr 23:30, 23:45 (-3), 23:00 (-4) to 5 Apr 00:00 (-4)
    from: '2026-04-05T02:20:00Z',
    slots: [
      '2026-04-05T02:30:00.000Z',
      '2026-04-05T02:45:00.000Z',
      '2026-04-05T03:00:00.000Z',
      '2026-04-05T03:15:00.000Z',
      '2026-04-05T03:30:00.000Z',
      '2026-04-05T03:45:00.000Z',
      '2026-04-05T04:00:00.000Z',
    ],
    everyMs: QUARTER_HOUR,
  },
  // Australia/Lord_Howe
  {
    zone: 'Australia/Lord_Howe',
    transition: 'spring forward',
    cron: '15 2 * * *', // 02:15 does not exist on 4 Oct: 02:30 (+11)
    from: '2026-10-02T12:00:00Z',
    slots: ['2026-10-02T15:45:00.000Z', '2026-10-03T15:30:00.000Z', '2026-10-04T15:15:00.000Z'],
  },
  {
    zone: 'Australia/Lord_Howe',
    transition: 'fall back',
    cron: '45 1 * * *', // 5 Apr 01:45 (+11), not 01:45 (+10:30) as well
    from: '2026-04-03T12:00:00Z',
    slots: ['2026-04-03T14:45:00.000Z', '2026-04-04T14:45:00.000Z', '2026-04-05T15:15:00.000Z'],
  },
  {
    zone: 'Australia/Lord_Howe',
    transition: 'spring forward',
    cron: '*/15 * * * *', // 01:30, 01:45 (+10:30), then 02:30 (+11)
    from: '2026-10-03T14:50:00Z',
    slots: [
      '2026-10-03T15:00:00.000Z',
      '2026-10-03T15:15:00.000Z',
      '2026-10-03T15:30:00.000Z',
      '2026-10-03T15:45:00.000Z',
    ],
    everyMs: QUARTER_HOUR,
  },
  {
    zone: 'Australia/Lord_Howe',
    transition: 'fall back',
    cron: '*/15 * * * *', // 01:30, 01:45 (+11), 01:30 to 02:00 (+10:30)
    from: '2026-04-04T14:20:00Z',
    slots: [
      '2026-04-04T14:30:00.000Z',
      '2026-04-04T14:45:00.000Z',
      '2026-04-04T15:00:00.000Z',
      '2026-04-04T15:15:00.000Z',
      '2026-04-04T15:30:00.000Z',
    ],
    everyMs: QUARTER_HOUR,
  },
]

for (const row of DST_TABLE) {
  const kind = row.everyMs === undefined ? 'fixed-time' : 'interval'
  test(`${row.zone}, ${row.transition}: the ${kind} job '${row.cron}' runs at the slots of the table`, () => {
    const schedule = new CronSchedule(row.cron, row.zone)
    assert.deepEqual(isos(schedule.upcoming(ms(row.from), row.slots.length)), row.slots)
    assert.equal(schedule.nextAfter(ms(row.from)), ms(row.slots[0]!))
    if (row.everyMs !== undefined) {
      for (let i = 1; i < row.slots.length; i++) {
        assert.equal(ms(row.slots[i]!) - ms(row.slots[i - 1]!), row.everyMs, `${row.slots[i]}`)
      }
    }
  })

  test(`${row.zone}, ${row.transition}: newestIn finds each slot of '${row.cron}' going back`, () => {
    const schedule = new CronSchedule(row.cron, row.zone)
    for (let i = 1; i < row.slots.length; i++) {
      const previous = ms(row.slots[i - 1]!)
      const slot = ms(row.slots[i]!)
      assert.equal(schedule.newestIn(previous, slot), slot, `at ${row.slots[i]}`)
      assert.equal(schedule.newestIn(previous, slot - 1), null, `just before ${row.slots[i]}`)
      assert.equal(schedule.newestIn(ms(row.from), slot - 1), previous, `just before ${row.slots[i]}`)
    }
  })
}

test('the table covers both 2026 transitions of each zone, for a fixed-time and an interval job', () => {
  for (const zone of ['America/New_York', 'Europe/London', 'America/Santiago', 'Australia/Lord_Howe']) {
    for (const transition of ['spring forward', 'fall back']) {
      const rows = DST_TABLE.filter((row) => row.zone === zone && row.transition === transition)
      assert.ok(
        rows.some((row) => row.everyMs === undefined),
        `${zone} ${transition}: fixed`,
      )
      assert.ok(
        rows.some((row) => row.everyMs !== undefined),
        `${zone} ${transition}: interval`,
      )
    }
  }
})

test('a fixed-time job in a repeated hour does not run when asked from inside its second pass', () => {
  // New York, 1 Nov: 01:30 EDT was 05:30Z; at 06:10Z (01:10 EST) the next 01:30 is the next day's.
  const schedule = new CronSchedule('30 1 * * *', 'America/New_York')
  assert.deepEqual(isos([schedule.nextAfter(ms('2026-11-01T06:10:00Z'))!]), ['2026-11-02T06:30:00.000Z'])
  assert.equal(schedule.newestIn(ms('2026-11-01T05:30:00Z'), ms('2026-11-01T07:00:00Z')), null)
})

test('a step without a wildcard is an interval job: a time in the gap is skipped', () => {
  // 02:00 does not exist on 8 Mar in New York; the two-hourly job goes from 00:00 EST to 04:00 EDT.
  const schedule = new CronSchedule('0 0-23/2 * * *', 'America/New_York')
  assert.deepEqual(isos(schedule.upcoming(ms('2026-03-08T04:30:00Z'), 2)), [
    '2026-03-08T05:00:00.000Z',
    '2026-03-08T08:00:00.000Z',
  ])
})

test('documented: an hourly job in Australia/Lord_Howe is 90 minutes apart across each transition', () => {
  // Slots are wall-clock hours and the shift is 30 minutes: 01:00 (+10:30), 03:00 (+11) in October;
  // 01:00 (+11), 02:00 (+10:30) in April.
  const schedule = new CronSchedule('0 * * * *', 'Australia/Lord_Howe')
  assert.deepEqual(isos(schedule.upcoming(ms('2026-10-03T14:00:00Z'), 2)), [
    '2026-10-03T14:30:00.000Z',
    '2026-10-03T16:00:00.000Z',
  ])
  assert.deepEqual(isos(schedule.upcoming(ms('2026-04-04T13:30:00Z'), 2)), [
    '2026-04-04T14:00:00.000Z',
    '2026-04-04T15:30:00.000Z',
  ])
})

test('documented deviation: in America/Nuuk a fixed time in the gap that crosses midnight does not run', () => {
  // 28 Mar 2026: 23:00 (-2) → 29 Mar 00:00 (-1), at 01:00Z. Vixie would run 28 Mar's 23:30 at
  // 00:00 (01:00Z); croner moves a time in a gap only within its day, so that day has no slot.
  // If a croner upgrade changes this, update the module comment of cron.ts.
  const schedule = new CronSchedule('30 23 * * *', 'America/Nuuk')
  assert.deepEqual(isos(schedule.upcoming(ms('2026-03-27T12:00:00Z'), 2)), [
    '2026-03-28T01:30:00.000Z', // 27 Mar 23:30 (-2)
    '2026-03-30T00:30:00.000Z', // 29 Mar 23:30 (-1)
  ])
})

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
