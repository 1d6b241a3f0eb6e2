/**
 * `ferry enqueue`: the one-job form, and --stdin, which stores each good JSON line through the
 * bulk path, prints the ids in input order and reports bad lines by number.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { test } from 'node:test'

import { createClient } from '../../src/index.js'
import { runCli, spawnCli } from '../support/processes.js'
import { tempDatabase } from '../support/sqlite-harness.js'
import { allJobs } from '../support/store-harness.js'
import { getJob } from '../support/store-calls.js'

test('enqueues one job from its arguments and prints its id', async (t) => {
  const db = tempDatabase(t)
  const before = Date.now()
  const { code, stdout, stderr } = await runCli(db.url, [
    'enqueue',
    'send-email',
    '{"to":"ada@example.com"}',
    '--queue',
    'mail',
    '--priority',
    '5',
    '--delay',
    '10m',
    '--max-attempts',
    '3',
    '--unique-key',
    'welcome-ada',
  ])
  assert.equal(stderr, '')
  assert.equal(code, 0)
  const store = await db.open()
  const job = await getJob(store, stdout.trim())
  assert.ok(job !== null, `no job ${stdout.trim()}`)
  assert.equal(job.name, 'send-email')
  assert.deepEqual(job.payload, { to: 'ada@example.com' })
  assert.equal(job.queue, 'mail')
  assert.equal(job.priority, 5)
  assert.equal(job.state, 'scheduled')
  assert.equal(job.runAt, job.createdAt + 600_000)
  assert.ok(job.createdAt >= before)
  assert.equal(job.maxAttempts, 3)
  assert.equal(job.uniqueKey, 'welcome-ada')
})

test('enqueues one job with --timeout and --run-at, as an ISO 8601 instant or epoch milliseconds', async (t) => {
  const db = tempDatabase(t)
  const runAt = Date.parse('2030-01-31T09:00:00Z')
  const [iso, epoch] = await Promise.all([
    runCli(db.url, ['enqueue', 'report', '--timeout', '5m', '--run-at', '2030-01-31T09:00:00Z']),
    runCli(db.url, ['enqueue', 'report', '--run-at', String(runAt + 1)]),
  ])
  for (const result of [iso, epoch]) assert.equal(result.code, 0, result.stderr)
  const store = await db.open()
  const first = (await getJob(store, iso.stdout.trim()))!
  assert.deepEqual([first.state, first.runAt, first.timeoutMs], ['scheduled', runAt, 300_000])
  const second = (await getJob(store, epoch.stdout.trim()))!
  assert.deepEqual([second.runAt, second.timeoutMs], [runAt + 1, null])
})

test('refuses --delay with --run-at, and a --run-at or --timeout that is not one, storing nothing', async (t) => {
  const db = tempDatabase(t)
  const [both, badInstant, badTimeout, withStdin] = await Promise.all([
    runCli(db.url, ['enqueue', 'report', '--delay', '5m', '--run-at', '2030-01-31T09:00:00Z']),
    runCli(db.url, ['enqueue', 'report', '--run-at', 'tomorrow']),
    runCli(db.url, ['enqueue', 'report', '--timeout', 'soon']),
    runCli(db.url, ['enqueue', '--stdin', '--timeout', '5s'], '{"name":"x"}\n'),
  ])
  assert.equal(both.code, 1)
  assert.match(both.stderr, /^error: give --delay or --run-at, not both\n/)
  assert.equal(badInstant.code, 2)
  assert.match(
    badInstant.stderr,
    /^ferry: --run-at: "tomorrow" is not an ISO 8601 date .*\[invalid_run_at\]\n$/,
  )
  assert.equal(badTimeout.code, 2)
  assert.match(badTimeout.stderr, /^ferry: --timeout: "soon" is not a duration/)
  assert.equal(withStdin.code, 1)
  assert.match(withStdin.stderr, /^error: --timeout cannot be combined with --stdin/)
  assert.deepEqual(await allJobs(await db.open()), [])
})

test('stores every good --stdin line with its options, prints their ids in input order and reports bad lines by number', async (t) => {
  const db = tempDatabase(t)
  const lines = [
    /* 1 */ '{"name":"send-email","payload":{"to":"ada@example.com"}}',
    /* 2 */ '{"name":"send-email","payload":{"to":',
    /* 3 */ '{"name":"resize","payload":[1,2],"queue":"images","priority":-3,"delay":"10m","maxAttempts":2}',
    /* 4 */ '',
    /* 5 */ '{"name":"resize","prioirty":1}',
    /* 6 */ '{"name":"report","runAt":"2030-01-31T09:00:00Z","timeoutMs":5000,"uniqueKey":"monthly"}',
    /* 7 */ '{"name":"report","payload":{"size":1},"priority":1.5}',
    /* 8 */ '{"name":"report","payload":null,"delayMs":1500}\r',
    /* 9 */ '["not","an","object"]',
    /* 10 */ '{"name":"report","uniqueKey":"monthly"}',
    /* 11 */ '{"name":"bad name!"}',
    /* 12 */ '{"name":"ping","delay":"7x"}',
    /* 13 */ '{"name":"ping","runAt":1900000000000}',
  ]
  // The last line has no newline: it still counts.
  const before = Date.now()
  const { code, stdout, stderr } = await runCli(db.url, ['enqueue', '--stdin'], lines.join('\n'))
  const after = Date.now()

  assert.equal(code, 1, `stderr:\n${stderr}`)
  const errors = stderr.trimEnd().split('\n')
  assert.deepEqual(
    errors.map((line) => /^line (\d+): (\S+)/.exec(line)?.slice(1)),
    [
      ['2', 'is'],
      ['5', 'prioirty:'],
      ['7', 'priority:'],
      ['9', 'must'],
      ['11', 'name:'],
      ['12', 'delay:'],
    ],
    stderr,
  )
  assert.match(errors[0]!, /^line 2: is not valid JSON/)
  assert.match(
    errors[1]!,
    /^line 5: prioirty: unknown option, did you mean priority\? \(known options: name, payload, queue, priority, delay/,
  )
  assert.match(errors[2]!, /^line 7: priority: must be an integer/)
  assert.match(errors[3]!, /^line 9: must be a JSON object/)
  assert.match(errors[5]!, /^line 12: delay: "7x" is not a duration/)

  const printed = stdout.trimEnd().split('\n')
  const store = await db.open()
  const stored = await allJobs(store)
  // Line 10 repeats line 6's uniqueKey: it prints that job's id and stores nothing.
  assert.equal(printed.length, 6)
  assert.equal(printed[4], printed[2])
  assert.deepEqual(
    stored.map((job) => job.id),
    printed.filter((_, i) => i !== 4),
  )

  const [ada, resize, report, delayed, , ping] = await Promise.all(printed.map((id) => getJob(store, id)))
  assert.ok(ada && resize && report && delayed && ping)
  assert.deepEqual(
    [ada.name, ada.payload, ada.queue, ada.priority, ada.state],
    ['send-email', { to: 'ada@example.com' }, 'default', 0, 'ready'],
  )
  assert.deepEqual(
    [resize.name, resize.payload, resize.queue, resize.priority, resize.maxAttempts],
    ['resize', [1, 2], 'images', -3, 2],
  )
  assert.equal(resize.state, 'scheduled')
  assert.equal(resize.runAt, resize.createdAt + 600_000)
  assert.deepEqual(
    [report.payload, report.runAt, report.timeoutMs, report.uniqueKey, report.maxAttempts],
    [null, Date.parse('2030-01-31T09:00:00Z'), 5000, 'monthly', 25],
  )
  assert.equal(delayed.runAt, delayed.createdAt + 1500)
  assert.equal(ping.runAt, 1_900_000_000_000)
  for (const job of stored) assert.ok(job.createdAt >= before && job.createdAt <= after)
})

test('stores thousands of --stdin lines across several batches in input order, saying nothing on stderr', async (t) => {
  const db = tempDatabase(t)
  const count = 2500
  const input = Array.from({ length: count }, (_, seq) => JSON.stringify({ name: 'bulk', payload: { seq } }))
  const { code, stdout, stderr } = await runCli(db.url, ['enqueue', '--stdin'], `${input.join('\n')}\n`)
  assert.equal(stderr, '', 'no progress line when stderr is not a terminal')
  assert.equal(code, 0)
  const printed = stdout.trimEnd().split('\n')
  assert.equal(printed.length, count)
  const store = await db.open()
  const stored = await allJobs(store)
  assert.deepEqual(
    stored.map((job) => job.id),
    printed,
  )
  assert.deepEqual(
    stored.map((job) => (job.payload as { seq: number }).seq),
    input.map((_, seq) => seq),
  )
})

test('prints each id as soon as its line is committed when lines arrive slowly', async (t) => {
  const db = tempDatabase(t)
  const child = spawnCli(db.url, ['enqueue', '--stdin'])
  t.after(() => child.kill('SIGKILL'))
  child.stdout.setEncoding('utf8')
  const nextLine = async (): Promise<string> => {
    const [chunk] = (await once(child.stdout, 'data')) as [string]
    return chunk
  }
  // The input stays open: each id must come out without waiting for more lines or for the end.
  child.stdin.write('{"name":"first"}\n')
  const first = await nextLine()
  child.stdin.write('{"name":"second"}\n')
  const second = await nextLine()
  assert.match(first, /^\d+\n$/)
  assert.match(second, /^\d+\n$/)
  assert.ok(Number(second) > Number(first))
  const store = await db.open()
  assert.equal((await getJob(store, first.trim()))?.name, 'first')
  child.stdin.end()
  const [code] = (await once(child, 'close')) as [number]
  assert.equal(code, 0)
})

test('refuses arguments and one-job options beside --stdin with a usage error, storing nothing', async (t) => {
  const db = tempDatabase(t)
  const [withName, withQueue] = await Promise.all([
    runCli(db.url, ['enqueue', '--stdin', 'send-email'], '{"name":"x"}\n'),
    runCli(db.url, ['enqueue', '--stdin', '--queue', 'mail'], '{"name":"x"}\n'),
  ])
  assert.equal(withName.code, 1)
  assert.match(withName.stderr, /^error: --stdin takes no arguments/)
  assert.equal(withQueue.code, 1)
  assert.match(withQueue.stderr, /^error: --queue cannot be combined with --stdin/)
  const store = await db.open()
  assert.deepEqual(await allJobs(store), [])
})

test('needs a job name without --stdin', async (t) => {
  const db = tempDatabase(t)
  const { code, stderr } = await runCli(db.url, ['enqueue'])
  assert.equal(code, 1)
  assert.match(stderr, /^error: missing required argument 'name'/)
})

test('a duplicate --unique-key prints the existing id and says nothing was added, naming the job', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const { id } = await createClient({ store }).enqueue('send-email', {}, { uniqueKey: 'welcome-ada' })
  const again = await runCli(db.url, ['enqueue', 'other-name', '{"x":1}', '--unique-key', 'welcome-ada'])
  assert.equal(again.code, 0, again.stderr)
  assert.equal(again.stdout, `${id}\n`)
  assert.equal(
    again.stderr,
    `ferry: nothing was added: job ${id} (send-email, ready) already holds unique key "welcome-ada"\n`,
  )
  assert.equal((await store.listJobs({})).jobs.length, 1)
})

test('--unique-until started frees the key once a worker claims the job; --unique-for holds it for a window', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const sync = (): ReturnType<typeof runCli> =>
    runCli(db.url, ['enqueue', 'sync', '--unique-key', 'sync-1', '--unique-until', 'started'])
  const first = await sync()
  assert.equal(first.code, 0, first.stderr)
  assert.equal((await sync()).stdout, first.stdout, 'held while the job waits')
  await store.claim({ queues: ['default'], limit: 1, leaseMs: 60_000, workerId: 'w' })
  const after = await sync()
  assert.equal(after.code, 0, after.stderr)
  assert.notEqual(after.stdout, first.stdout, 'a new job once the first started')

  const ping = (): ReturnType<typeof runCli> =>
    runCli(db.url, ['enqueue', 'ping', '--unique-key', 'ping', '--unique-for', '1h'])
  const throttled = await ping()
  assert.equal(throttled.code, 0, throttled.stderr)
  assert.equal((await getJob(store, throttled.stdout.trim()))!.uniqueKey, 'ping')
  const within = await ping()
  assert.equal(within.stdout, throttled.stdout)
  assert.match(within.stderr, /nothing was added/)
})

test('a bad --unique-until, or --unique-for without --unique-key, is refused naming the option, and adds nothing', async (t) => {
  const db = tempDatabase(t)
  const bad = await runCli(db.url, ['enqueue', 'sync', '--unique-key', 'k', '--unique-until', 'done'])
  assert.equal(bad.code, 2, 'a usage error')
  assert.match(bad.stderr, /uniqueUntil: must be one of 'purged', 'finished', 'started' \(got "done"\)/)
  const alone = await runCli(db.url, ['enqueue', 'sync', '--unique-for', '10s'])
  assert.equal(alone.code, 2)
  assert.match(alone.stderr, /uniqueForMs: needs a uniqueKey/)
  const store = await db.open()
  assert.deepEqual(await allJobs(store), [])
})

test('--debounce runs the job that long from now, and a later one before it starts gives it its payload', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const reindex = (rev: number): ReturnType<typeof runCli> =>
    runCli(db.url, [
      'enqueue',
      'reindex',
      JSON.stringify({ rev }),
      '--unique-key',
      'doc-1',
      '--debounce',
      '1h',
    ])
  const first = await reindex(1)
  assert.equal(first.code, 0, first.stderr)
  const id = first.stdout.trim()
  const job = (await getJob(store, id))!
  assert.deepEqual([job.state, job.runAt], ['scheduled', job.createdAt + 3_600_000])
  const again = await reindex(2)
  assert.equal(again.code, 0, again.stderr)
  assert.equal(again.stdout, first.stdout)
  const changed = (await getJob(store, id))!
  assert.deepEqual(changed.payload, { rev: 2 })
  assert.equal(
    again.stderr,
    `ferry: debounced: job ${id} holding unique key "doc-1" took this payload, and runs at ${new Date(changed.runAt).toISOString()}\n`,
  )
  assert.equal((await allJobs(store)).length, 1)
})

test('--stdin lines take uniqueUntil, uniqueForMs and debounceMs, and refuse them without a uniqueKey', async (t) => {
  const db = tempDatabase(t)
  const lines = [
    '{"name":"sync","uniqueKey":"s","uniqueUntil":"started"}',
    '{"name":"sync","uniqueKey":"s","uniqueUntil":"started"}',
    '{"name":"reindex","payload":{"rev":1},"uniqueKey":"r","debounceMs":60000}',
    '{"name":"reindex","payload":{"rev":2},"uniqueKey":"r","debounceMs":60000}',
    '{"name":"ping","uniqueForMs":1000}',
  ]
  const { code, stdout, stderr } = await runCli(db.url, ['enqueue', '--stdin'], lines.join('\n'))
  assert.equal(code, 1)
  assert.match(stderr, /line 5: uniqueForMs: needs a uniqueKey/)
  const [sync, syncAgain, reindex, reindexAgain] = stdout.trim().split('\n')
  assert.equal(syncAgain, sync)
  assert.equal(reindexAgain, reindex)
  const store = await db.open()
  const job = (await getJob(store, reindex!))!
  assert.deepEqual([job.payload, job.runAt - job.createdAt], [{ rev: 2 }, 60_000])
  assert.equal((await allJobs(store)).length, 2)
})
