// The Vixie/ISC daylight-saving rules as core/cron.ts applies them: a table of expected instants,
// written by hand from each zone's rules, for four zones across both 2026 transitions.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { CronSchedule } from './cron.js'

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
