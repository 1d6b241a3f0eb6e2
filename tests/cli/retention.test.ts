/**
 * `ferry retention`, and a job's own `--keep-for`: each prints what the queue or job keeps, the
 * store holds it, and bad input exits 2 with nothing changed.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { runCli } from '../support/processes.js'
import { tempDatabase } from '../support/sqlite-harness.js'

const DAY = 86_400_000

test('retention shows the defaults, sets each setting given, and --clear puts the defaults back', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const shown = await runCli(db.url, ['retention', 'mail'])
  assert.deepEqual([shown.code, shown.stderr], [0, ''])
  assert.equal(
    shown.stdout,
    'queue mail keeps:\n' +
      '  completed jobs   1d after they finish (default)\n' +
      '  dead jobs        14d after they finish (default)\n' +
      '  completed count  no limit (default)\n' +
      '  dead count       no limit (default)\n',
  )
  assert.deepEqual((await store.control()).queues, [], 'showing changes nothing')

  const set = await runCli(db.url, [
    'retention',
    'mail',
    '--completed',
    '2h',
    '--dead',
    'forever',
    '--dead-count',
    '100',
  ])
  assert.deepEqual([set.code, set.stderr], [0, ''])
  assert.equal(
    set.stdout,
    'queue mail keeps:\n' +
      '  completed jobs   2h after they finish\n' +
      '  dead jobs        forever\n' +
      '  completed count  no limit (default)\n' +
      '  dead count       the newest 100\n',
  )
  assert.deepEqual((await store.control()).queues[0]?.retention, {
    completedMs: 2 * 3_600_000,
    deadMs: Infinity,
    completedCount: null,
    deadCount: 100,
  })

  const json = JSON.parse(
    (await runCli(db.url, ['retention', 'mail', '--completed', 'default', '--json'])).stdout,
  )
  assert.deepEqual(json, {
    queue: 'mail',
    completedMs: DAY,
    deadMs: 'forever',
    completedCount: null,
    deadCount: 100,
    defaults: ['completedMs', 'completedCount'],
  })

  const limits = await runCli(db.url, ['limits'])
  assert.equal(limits.stdout, 'no queue is paused or limited\n', 'a retention is not a limit')

  const cleared = await runCli(db.url, ['retention', 'mail', '--clear'])
  assert.equal(cleared.code, 0)
  assert.match(cleared.stdout, /dead jobs\s+14d after they finish \(default\)/)
  assert.deepEqual((await store.control()).queues, [])
})

test('bad retention settings exit 2 naming the option, and change nothing', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  await runCli(db.url, ['retention', 'mail', '--dead', '30d'])
  const before = (await store.control()).queues
  for (const [args, option] of [
    [['--completed', '-1h'], '--completed'],
    [['--dead', 'soon'], '--dead'],
    [['--dead', '200w', '--completed', '101000d'], '--completed'],
    [['--completed-count', '-1'], '--completed-count'],
    [['--dead-count', '1.5'], '--dead-count'],
    [['--clear', '--dead', '1d'], '--clear'],
  ] as const) {
    const { code, stdout, stderr } = await runCli(db.url, ['retention', 'mail', ...args])
    assert.equal(code, 2, `${args.join(' ')} exits 2`)
    assert.equal(stdout, '')
    assert.match(stderr, new RegExp(`^ferry: ${option}: `), `${args.join(' ')} names ${option}`)
  }
  const badQueue = await runCli(db.url, ['retention', 'bad queue'])
  assert.equal(badQueue.code, 2)
  assert.deepEqual((await store.control()).queues, before)
})

test('enqueue --keep-for gives a job its own retention, which jobs show prints', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const kept = await runCli(db.url, ['enqueue', 'report', '--keep-for', '30d'])
  const forever = await runCli(db.url, ['enqueue', 'audit', '--keep-for', 'forever'])
  const plain = await runCli(db.url, ['enqueue', 'plain'])
  const [keptJob, foreverJob, plainJob] = (
    await store.listJobs({ ids: [kept.stdout.trim(), forever.stdout.trim(), plain.stdout.trim()] })
  ).jobs
  assert.equal(keptJob?.keepForMs, 30 * DAY)
  assert.equal(foreverJob?.keepForMs, Infinity)
  assert.equal(plainJob?.keepForMs, null)
  assert.match((await runCli(db.url, ['jobs', 'show', keptJob!.id])).stdout, /kept for:\s+30d once finished/)
  assert.match(
    (await runCli(db.url, ['jobs', 'show', plainJob!.id])).stdout,
    /kept for:\s+its queue.s retention/,
  )
  const json = JSON.parse((await runCli(db.url, ['jobs', 'show', foreverJob!.id, '--json'])).stdout)
  assert.equal(json.keepForMs, 'forever')

  const bad = await runCli(db.url, ['enqueue', 'report', '--keep-for', 'later'])
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /^ferry: --keep-for: /)
})
