/**
 * `ferry schedules add|list|remove|pause|resume|run-now`, and a schedule fired by `ferry work`:
 * each command prints what it did, the store holds it, and bad input exits 2 with nothing changed.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'

import { REPO_ROOT, runCli } from '../support/processes.js'
import { tempDatabase } from '../support/sqlite-harness.js'

const HANDLERS = join(REPO_ROOT, 'tests', 'support', 'handlers', 'plain.mjs')

test('add, list, pause, resume and remove a schedule', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const added = await runCli(db.url, [
    'schedules',
    'add',
    'nightly',
    '--cron',
    '30 2 * * *',
    '--tz',
    'Europe/London',
    '--job',
    'report',
    '--payload',
    '{"kind":"daily"}',
    '--queue',
    'reports',
    '--missed',
    'once',
    '--overlap',
    'skip',
  ])
  assert.equal(added.stderr, '')
  assert.equal(added.code, 0)
  assert.match(
    added.stdout,
    /^schedule nightly: 30 2 \* \* \* \(Europe\/London\) enqueues report on reports, next \d{4}-/,
  )
  const [schedule] = (await store.schedules()).schedules
  assert.deepEqual(
    { ...schedule!.job, missed: schedule!.missed, overlap: schedule!.overlap, tz: schedule!.timeZone },
    {
      name: 'report',
      queue: 'reports',
      payload: '{"kind":"daily"}',
      priority: 0,
      maxAttempts: 25,
      timeoutMs: null,
      group: null,
      expiresInMs: null,
      backoff: null,
      missed: 'once',
      overlap: 'skip',
      tz: 'Europe/London',
    },
  )

  const table = await runCli(db.url, ['schedules', 'list'])
  assert.equal(table.code, 0)
  const lines = table.stdout.trimEnd().split('\n')
  assert.match(lines[0]!, /^ID\s+CRON\s+ZONE\s+JOB\s+QUEUE\s+NEXT\s+LAST JOB\s+POLICIES$/)
  assert.match(
    lines[1]!,
    /^nightly\s+30 2 \* \* \*\s+Europe\/London\s+report\s+reports\s+next .+\s+-\s+missed once, overlap skip$/,
  )

  const [json] = JSON.parse((await runCli(db.url, ['schedules', 'list', '--json'])).stdout) as {
    id: string
    job: { payload: unknown }
    upcoming: string[]
    pausedAt: string | null
  }[]
  assert.equal(json!.id, 'nightly')
  assert.deepEqual(json!.job.payload, { kind: 'daily' })
  assert.equal(json!.upcoming.length, 3)
  // 02:30 in London is 01:30 or 02:30 UTC, by the season.
  for (const slot of json!.upcoming) assert.match(slot, /T0[12]:30:00\.000Z$/)

  const paused = await runCli(db.url, ['schedules', 'pause', 'nightly'])
  assert.deepEqual([paused.code, paused.stderr], [0, ''])
  assert.notEqual((await store.schedules()).schedules[0]!.pausedAt, null)
  assert.match((await runCli(db.url, ['schedules', 'list'])).stdout, /paused/)
  const resumed = await runCli(db.url, ['schedules', 'resume', 'nightly'])
  assert.equal(resumed.code, 0)
  assert.match(resumed.stdout, /^resumed schedule nightly: next /)
  assert.equal((await store.schedules()).schedules[0]!.pausedAt, null)

  const removed = await runCli(db.url, ['schedules', 'remove', 'nightly'])
  assert.deepEqual([removed.code, removed.stdout], [0, 'removed schedule nightly\n'])
  assert.deepEqual((await store.schedules()).schedules, [])
  const empty = await runCli(db.url, ['schedules', 'list'])
  assert.equal(empty.stdout, 'no schedules (add one with `ferry schedules add`)\n')
})

test('bad input exits 2 naming what is wrong, and writes nothing', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const cases: [string[], RegExp][] = [
    [['add', 's', '--cron', 'every day', '--job', 'x'], /cron/],
    [
      ['add', 's', '--cron', '* * * * *', '--tz', 'Mars/Base', '--job', 'x'],
      /timeZone: "Mars\/Base" is not an IANA time zone/,
    ],
    [
      ['add', 's', '--cron', '* * * * *', '--job', 'x', '--missed', 'never'],
      /--missed: must be one of skip, once, all/,
    ],
    [
      ['add', 's', '--cron', '* * * * *', '--job', 'x', '--overlap', 'queue'],
      /--overlap: must be one of allow, skip/,
    ],
    [['add', 's', '--cron', '* * * * *', '--job', 'x', '--payload', '{'], /--payload: is not valid JSON/],
    [['add', 'bad id', '--cron', '* * * * *', '--job', 'x'], /id: must be 1 to 128 characters/],
    [['add', 's', '--cron', '* * * * *', '--job', 'x', '--queue', 'a b'], /job\.queue/],
    [['pause', 'nope'], /schedule nope does not exist/],
    [['resume', 'nope'], /schedule nope does not exist/],
    [['remove', 'nope'], /schedule nope does not exist/],
    [['run-now', 'nope'], /schedule nope does not exist/],
  ]
  for (const [args, stderr] of cases) {
    const result = await runCli(db.url, ['schedules', ...args])
    assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`)
    assert.match(result.stderr, stderr, args.join(' '))
    assert.equal(result.stdout, '')
  }
  const missing = await runCli(db.url, ['schedules', 'add', 's', '--job', 'x'])
  assert.notEqual(missing.code, 0)
  assert.match(missing.stderr, /--cron/)
  assert.deepEqual((await store.schedules()).schedules, [])
})

test('ferry work fires a seconds schedule; the job shows its slot; run-now enqueues one more', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const added = await runCli(db.url, [
    'schedules',
    'add',
    'fast',
    '--cron',
    '*/2 * * * * *',
    '--job',
    'plain-mjs',
    '--payload',
    '{"n":1}',
  ])
  assert.equal(added.code, 0, added.stderr)
  const worked = await runCli(db.url, ['work', '--handlers', HANDLERS, '--time-limit', '4500ms', '--verbose'])
  assert.equal(worked.code, 0, worked.stderr)
  assert.match(worked.stderr, /schedule fast fired \d{4}-\d\d-\d\dT\d\d:\d\d:\d[02468]\.000Z: job \d+/)
  const { jobs } = await store.listJobs()
  assert.ok(jobs.length >= 2, `a job every 2 s in 4.5 s (got ${jobs.length})`)
  assert.ok(jobs.every((job) => job.state === 'completed'))

  const shown = await runCli(db.url, ['jobs', 'show', jobs[0]!.id, '--json'])
  const job = JSON.parse(shown.stdout) as { schedule: { id: string; slot: string; late: boolean } }
  assert.equal(job.schedule.id, 'fast')
  assert.equal(job.schedule.slot, new Date(jobs[0]!.schedule!.slot).toISOString())
  assert.match(job.schedule.slot, /:\d[02468]\.000Z$/)

  const ran = await runCli(db.url, ['schedules', 'run-now', 'fast'])
  assert.equal(ran.code, 0, ran.stderr)
  const id = /^enqueued job (\d+) of schedule fast\n$/.exec(ran.stdout)?.[1]
  assert.ok(id !== undefined, ran.stdout)
  const extra = (await store.listJobs({ ids: [id] })).jobs[0]!
  assert.equal(extra.schedule?.id, 'fast')
  assert.equal(extra.state, 'ready')
  const noScheduler = await runCli(db.url, [
    'work',
    '--handlers',
    HANDLERS,
    '--time-limit',
    '2500ms',
    '--no-scheduler',
  ])
  assert.equal(noScheduler.code, 0, noScheduler.stderr)
  const after = await store.listJobs({ limit: 1000 })
  assert.equal(after.jobs.length, jobs.length + 1, 'a worker without its scheduler fires nothing')
})
