/**
 * `ferry pause`, `resume`, `limit` and `limits`, and the control settings `ferry stats` shows:
 * each prints what it did, the store holds it, and bad input exits 2 with nothing changed.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { createClient } from '../../src/index.js'
import { runCli } from '../support/processes.js'
import { tempDatabase } from '../support/sqlite-harness.js'

test('pause records who, when and why; resume forgets it; both print what they did', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const before = Date.now()
  const paused = await runCli(db.url, ['pause', 'mail', '--reason', 'provider down', '--by', 'ada'])
  assert.equal(paused.stderr, '')
  assert.equal(paused.code, 0)
  assert.match(
    paused.stdout,
    /^paused queue mail at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \((now|\d+s ago)\): no worker claims its jobs until `ferry resume mail`\n$/,
  )
  const [control] = (await store.control()).queues
  assert.equal(control?.queue, 'mail')
  assert.equal(control?.paused?.by, 'ada')
  assert.equal(control?.paused?.reason, 'provider down')
  assert.ok(control!.paused!.at >= before && control!.paused!.at <= Date.now())

  // Without --by, the pause is signed user@host.
  await runCli(db.url, ['pause', 'mail'])
  assert.match((await store.control()).queues[0]?.paused?.by ?? '', /^.+@.+$/)

  const resumed = await runCli(db.url, ['resume', 'mail'])
  assert.deepEqual([resumed.code, resumed.stdout, resumed.stderr], [0, 'resumed queue mail\n', ''])
  assert.deepEqual((await store.control()).queues, [])
})

test('limit sets and clears a concurrency limit; limits lists paused and limited queues', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const empty = await runCli(db.url, ['limits'])
  assert.deepEqual([empty.code, empty.stdout], [0, 'no queue is paused or limited\n'])

  const limited = await runCli(db.url, ['limit', 'api', '--concurrency', '5'])
  assert.deepEqual([limited.code, limited.stdout, limited.stderr], [0, 'queue api: concurrency 5\n', ''])
  await runCli(db.url, ['pause', 'mail', '--reason', 'provider down', '--by', 'ada'])

  const table = await runCli(db.url, ['limits'])
  assert.equal(table.code, 0)
  const lines = table.stdout.trimEnd().split('\n')
  assert.match(lines[0]!, /^QUEUE\s+PAUSED\s+BY\s+REASON\s+LIMITS$/)
  assert.match(lines[1]!, /^api\s+-\s+concurrency 5$/)
  assert.match(lines[2]!, /^mail\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(.+\)\s+ada\s+provider down\s+no limits$/)

  const json = JSON.parse((await runCli(db.url, ['limits', '--json'])).stdout) as unknown[]
  assert.deepEqual(json[0], {
    queue: 'api',
    paused: null,
    limits: { concurrency: 5, rate: null, groupConcurrency: null, groupRate: null },
  })
  assert.match((json[1] as { paused: { at: string } }).paused.at, /^\d{4}-\d\d-\d\dT.+Z$/)

  const cleared = await runCli(db.url, ['limit', 'api', '--clear'])
  assert.deepEqual([cleared.code, cleared.stdout], [0, 'queue api: no limits\n'])
  assert.deepEqual(
    (await store.control()).queues.map((entry) => entry.queue),
    ['mail'],
  )
})

test('limit sets rates with their windows and group limits, each on its own, and none removes one', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const set = await runCli(db.url, [
    'limit',
    'api',
    '--rate',
    '100',
    '--per',
    '1m',
    '--group-concurrency',
    '2',
    '--group-rate=10',
    '--per=1s',
  ])
  assert.deepEqual(
    [set.code, set.stdout, set.stderr],
    [0, 'queue api: rate 100/1m, group concurrency 2, group rate 10/1s\n', ''],
  )
  assert.deepEqual((await store.control()).queues[0]?.limits, {
    concurrency: null,
    rate: { limit: 100, perMs: 60_000 },
    groupConcurrency: 2,
    groupRate: { limit: 10, perMs: 1000 },
  })
  // A --per before the other rate belongs to the one before it.
  await runCli(db.url, ['limit', 'api', '--group-rate', '3', '--per', '2s', '--rate', '7', '--per', '500ms'])
  const removed = await runCli(db.url, ['limit', 'api', '--group-concurrency', 'none', '--concurrency', '4'])
  assert.equal(removed.stdout, 'queue api: concurrency 4, rate 7/500ms, group rate 3/2s\n')
  const table = await runCli(db.url, ['limits'])
  assert.match(
    table.stdout.trimEnd().split('\n')[1]!,
    /^api\s+-\s+concurrency 4, rate 7\/500ms, group rate 3\/2s$/,
  )
})

test('stats shows each queue paused or limited, in the table and in --json', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  await createClient({ store }).enqueue('task', null, { queue: 'mail' })
  await runCli(db.url, ['pause', 'mail', '--reason', 'provider down', '--by', 'ada'])
  await runCli(db.url, ['limit', 'api', '--concurrency', '3'])

  const { code, stdout } = await runCli(db.url, ['stats'])
  assert.equal(code, 0)
  const lines = stdout.trimEnd().split('\n')
  assert.match(lines[0]!, /\bCONTROL$/)
  assert.match(
    lines[1]!,
    /^api\s+0\s+0\s+0\s+0\s+0\s+0\s+0\s+0\s+concurrency 3$/,
    'a queue with a setting and no job',
  )
  assert.match(lines[2]!, /^mail\s+1\s+0\s+0\s+0\s+0\s+0\s+0\s+0\s+paused$/)
  assert.match(lines[4]!, /^mail paused .+ by ada: provider down$/)

  const report = JSON.parse((await runCli(db.url, ['stats', '--json'])).stdout) as {
    queues: { queue: string; paused: { by: string } | null; limits: { concurrency: number | null } }[]
  }
  assert.deepEqual(
    report.queues.map(({ queue, paused, limits }) => [queue, paused?.by ?? null, limits.concurrency]),
    [
      ['api', null, 3],
      ['mail', 'ada', null],
    ],
  )
})

test('bad queue changes exit 2 naming the option, and change nothing', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const cases: [string[], RegExp][] = [
    [['pause', 'bad queue'], /queue/],
    [['pause', 'q', '--reason', 'x'.repeat(1001)], /pause\.reason/],
    [['limit', 'q'], /--concurrency/],
    [['limit', 'q', '--concurrency', '0'], /--concurrency/],
    [['limit', 'q', '--concurrency', 'five'], /--concurrency/],
    [['limit', 'q', '--concurrency', '2', '--clear'], /--clear/],
    [['limit', 'q', '--rate', '5'], /--per: --rate 5 needs a window/],
    [['limit', 'q', '--per', '1s', '--rate', '5'], /--per: goes after/],
    [['limit', 'q', '--rate', '5', '--per', '1s', '--per', '2s'], /--per: given twice/],
    [['limit', 'q', '--rate', '5', '--per', '2d'], /--per: "2d" must be from 1ms to 1d/],
    [['limit', 'q', '--rate', '5', '--per', 'soon'], /--per/],
    [['limit', 'q', '--group-rate', '0', '--per', '1s'], /--group-rate/],
    [['limit', 'q', '--group-concurrency', '-1'], /--group-concurrency/],
    [['resume', 'q'.repeat(200)], /queue/],
  ]
  for (const [args, field] of cases) {
    const { code, stdout, stderr } = await runCli(db.url, args)
    assert.equal(code, 2, `ferry ${args.join(' ')}`)
    assert.equal(stdout, '')
    assert.match(stderr, field, `ferry ${args.join(' ')}: ${stderr}`)
  }
  assert.deepEqual((await store.control()).queues, [])
})
