/**
 * `ferry stats`, `ferry jobs` and `ferry jobs show`, in their human and --json forms, and the
 * one-line errors for an unknown job and bad option values.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { createClient, type Job, type Store } from '../../src/index.js'
import { finishJob, HANDLER_ERROR } from './cli-harness.js'
import { runCli } from '../support/processes.js'
import { tempDatabase } from '../support/sqlite-harness.js'
import { getJob } from '../support/store-calls.js'

interface Seeded {
  completed: string
  dead: string
  ready: string
  scheduled: string
  active: string
}

/** Queue mail: one job completed, one dead, one ready; queue images: one scheduled, one active. */
async function seed(store: Store): Promise<Seeded> {
  const client = createClient({ store })
  const enqueue = async (...args: Parameters<typeof client.enqueue>) => (await client.enqueue(...args)).id
  await enqueue('send-email', { to: 'ada@example.com' }, { queue: 'mail' })
  const completed = await finishJob(store, 'mail', 'completed', { result: { sent: true } })
  await enqueue('send-email', { to: 'bob@example.com' }, { queue: 'mail' })
  const dead = await finishJob(store, 'mail', 'dead')
  const ready = await enqueue(
    'send-email',
    { to: 'cy@example.com', cc: ['dee@example.com'] },
    { queue: 'mail', priority: 2 },
  )
  const scheduled = await enqueue(
    'resize',
    { width: 640 },
    { queue: 'images', delayMs: 600_000, timeoutMs: 30_000 },
  )
  const active = await enqueue('resize', { width: 1280 }, { queue: 'images', uniqueKey: 'resize-1280' })
  const [claimed] = await store.claim({ queues: ['images'], limit: 1, leaseMs: 60_000, workerId: 'worker-7' })
  // What its handler reported so far, as the worker's renewal writes it (docs/progress.md).
  const report = { progress: '{"resized":3,"of":4}', logs: ['loaded 1280x960', 'wrote \u001b[2Jthumb'] }
  await store.renew({ leases: [{ id: active, leaseToken: claimed!.leaseToken, report }], leaseMs: 60_000 })
  return { completed, dead, ready, scheduled, active }
}

/** The table's rows as lists of cells (cells never hold two spaces in a row). */
function tableRows(stdout: string): string[][] {
  return stdout
    .trimEnd()
    .split('\n')
    .map((line) => line.trim().split(/ {2,}/))
}

const JOB_JSON_KEYS = [
  'id',
  'queue',
  'name',
  'payload',
  'state',
  'priority',
  'runAt',
  'attempts',
  'maxAttempts',
  'timeoutMs',
  'uniqueKey',
  'group',
  'expiresAt',
  'schedule',
  'backoff',
  'keepForMs',
  'trace',
  'lastError',
  'result',
  'progress',
  'logs',
  'workerId',
  'leaseExpiresAt',
  'createdAt',
  'updatedAt',
  'finishedAt',
]

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString())

/** What --json must print for a job: every field, instants as ISO 8601 text. */
function expectedJson(job: Job): Record<string, unknown> {
  return {
    ...job,
    runAt: iso(job.runAt),
    expiresAt: iso(job.expiresAt),
    schedule: job.schedule === null ? null : { ...job.schedule, slot: iso(job.schedule.slot) },
    backoff: job.backoff,
    leaseExpiresAt: iso(job.leaseExpiresAt),
    createdAt: iso(job.createdAt),
    updatedAt: iso(job.updatedAt),
    finishedAt: iso(job.finishedAt),
  }
}

test('stats prints a row per queue, a total row and the last minute as per-minute throughput', async (t) => {
  const db = tempDatabase(t)
  await seed(await db.open())
  const { code, stdout, stderr } = await runCli(db.url, ['stats'])
  assert.equal(stderr, '')
  assert.equal(code, 0)
  assert.deepEqual(tableRows(stdout), [
    [
      'QUEUE',
      'READY',
      'SCHEDULED',
      'ACTIVE',
      'COMPLETED',
      'DEAD',
      'EXPIRED',
      'COMPLETED/MIN',
      'DEAD/MIN',
      'CONTROL',
    ],
    ['images', '0', '1', '1', '0', '0', '0', '0', '0'],
    ['mail', '1', '0', '0', '1', '1', '0', '1', '1'],
    ['(all)', '1', '1', '1', '1', '1', '0', '1', '1'],
  ])
})

test('stats --json prints counts per queue, totals, the window and the time as ISO 8601', async (t) => {
  const db = tempDatabase(t)
  await seed(await db.open())
  const emptyDb = tempDatabase(t)
  await emptyDb.open()
  const before = Date.now()
  const [seeded, empty] = await Promise.all([
    runCli(db.url, ['stats', '--json']),
    runCli(emptyDb.url, ['stats', '--json']),
  ])
  assert.equal(seeded.code, 0, seeded.stderr)
  const document = JSON.parse(seeded.stdout) as { at: string; queues: { oldestReadyAt: string | null }[] }
  assert.match(document.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  assert.ok(Date.parse(document.at) >= before - 1000)
  const counts = (
    ready: number,
    scheduled: number,
    active: number,
    completed: number,
    dead: number,
    recent: number,
  ) => ({
    ready,
    scheduled,
    active,
    completed,
    dead,
    expired: 0,
    recentCompletedCount: recent,
    recentDeadCount: recent,
  })
  const running = {
    paused: null,
    limits: { concurrency: null, rate: null, groupConcurrency: null, groupRate: null },
  }
  // The oldest ready job's time, as ISO 8601: mail's one ready job; images has none.
  const oldestReadyAt = document.queues[1]!.oldestReadyAt
  assert.match(oldestReadyAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  assert.deepEqual(document, {
    at: document.at,
    recentWindowMs: 60_000,
    queues: [
      { queue: 'images', ...counts(0, 1, 1, 0, 0, 0), oldestReadyAt: null, ...running },
      { queue: 'mail', ...counts(1, 0, 0, 1, 1, 1), oldestReadyAt, ...running },
    ],
    totals: counts(1, 1, 1, 1, 1, 1),
  })
  assert.equal(empty.code, 0, empty.stderr)
  const emptyDocument = JSON.parse(empty.stdout) as { at: string }
  assert.deepEqual(emptyDocument, {
    at: emptyDocument.at,
    recentWindowMs: 60_000,
    queues: [],
    totals: counts(0, 0, 0, 0, 0, 0),
  })
})

test('jobs prints a table of jobs, newest first, with attempts, times and the last error cut short', async (t) => {
  const db = tempDatabase(t)
  const ids = await seed(await db.open())
  const { code, stdout, stderr } = await runCli(db.url, ['jobs'])
  assert.equal(stderr, '')
  assert.equal(code, 0)
  const [header, ...rows] = tableRows(stdout)
  assert.deepEqual(header, [
    'ID',
    'QUEUE',
    'NAME',
    'STATE',
    'PRIORITY',
    'ATTEMPTS',
    'RUN AT / FINISHED AT',
    'LAST ERROR',
  ])
  const time = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \((now|in .+|.+ ago)\)$/
  assert.deepEqual(
    rows.map(([id, queue, name, state, priority, attempts]) => [id, queue, name, state, priority, attempts]),
    [
      [ids.active, 'images', 'resize', 'active', '0', '1/25'],
      [ids.scheduled, 'images', 'resize', 'scheduled', '0', '0/25'],
      [ids.ready, 'mail', 'send-email', 'ready', '2', '0/25'],
      [ids.dead, 'mail', 'send-email', 'dead', '0', '1/25'],
      [ids.completed, 'mail', 'send-email', 'completed', '0', '1/25'],
    ],
  )
  for (const row of rows) assert.match(row[6]!, time)
  assert.match(rows[1]![6]!, /\(in 9m \d+s\)$/, 'a scheduled job shows its run time')
  const lastError = rows[3]![7]!
  assert.ok(lastError.endsWith('…') && HANDLER_ERROR.message.startsWith(lastError.slice(0, -1)), lastError)
  assert.ok(lastError.length < HANDLER_ERROR.message.length)
  assert.equal(rows[4]!.length, 7, 'no error column for a job without an error')
})

/** A job whose first attempt failed with HANDLER_ERROR and whose second completed; returns its id. */
async function completedAfterFailure(store: Store): Promise<string> {
  const { id } = await createClient({ store }).enqueue('send-email', null, { queue: 'retried' })
  const [first] = await store.claim({ queues: ['retried'], limit: 1, leaseMs: 60_000, workerId: 'w' })
  const retryAt = Date.now()
  await store.settle({
    settlements: [{ kind: 'retry', id, leaseToken: first!.leaseToken, runAt: retryAt, error: HANDLER_ERROR }],
  })
  const [second] = await store.claim({ queues: ['retried'], limit: 1, leaseMs: 60_000, workerId: 'w' })
  assert.equal(second?.id, id)
  await store.settle({
    settlements: [{ kind: 'completed', id, leaseToken: second.leaseToken, result: null }],
  })
  return id
}

test("a completed job says that its last error was an earlier attempt's, in jobs and jobs show", async (t) => {
  const db = tempDatabase(t)
  const id = await completedAfterFailure(await db.open())
  const [listed, shown] = await Promise.all([runCli(db.url, ['jobs']), runCli(db.url, ['jobs', 'show', id])])
  assert.equal(listed.code, 0, listed.stderr)
  const [, row] = tableRows(listed.stdout)
  assert.deepEqual(row!.slice(0, 6), [id, 'retried', 'send-email', 'completed', '0', '2/25'])
  assert.match(row![7]!, /^\(earlier attempt\) cannot read properties of undefined/)
  assert.equal(shown.code, 0, shown.stderr)
  assert.match(
    shown.stdout,
    /\nlast error \(of an earlier attempt; the job then completed\):\n {2}error \(TypeError\): cannot read/,
  )
})

test('with FORCE_COLOR, dead rows are red, rows of jobs that failed and will run again yellow, errors red', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const ids = await seed(store)
  const { id: failing } = await createClient({ store }).enqueue('send-email', null, { queue: 'retried' })
  const [claimed] = await store.claim({ queues: ['retried'], limit: 1, leaseMs: 60_000, workerId: 'w' })
  await store.settle({
    settlements: [
      {
        kind: 'retry',
        id: failing,
        leaseToken: claimed!.leaseToken,
        runAt: Date.now() + 60_000,
        error: HANDLER_ERROR,
      },
    ],
  })
  const [colored, plain, error] = await Promise.all([
    runCli(db.url, ['jobs'], '', { FORCE_COLOR: '1' }),
    runCli(db.url, ['jobs'], '', { FORCE_COLOR: '0' }),
    runCli(db.url, ['jobs', '--state', 'bogus'], '', { FORCE_COLOR: '1' }),
  ])
  // The codes of format.ts's painter, as plain strings (a regular expression may not hold ESC).
  const [red, yellow, end] = ['\x1b[31m', '\x1b[33m', '\x1b[39m']
  const uncoloured = (text: string): string =>
    [red, yellow, end].reduce((rest, code) => rest.replaceAll(code, ''), text)
  const lines = colored.stdout.trimEnd().split('\n')
  const rowOf = (id: string): string =>
    lines.find((line) => uncoloured(line).trimStart().startsWith(`${id} `))!
  const deadRow = rowOf(ids.dead)
  assert.ok(deadRow.startsWith(red) && deadRow.endsWith(end) && / dead /.test(deadRow), deadRow)
  const failingRow = rowOf(failing)
  assert.ok(
    failingRow.startsWith(yellow) && failingRow.endsWith(end) && / scheduled /.test(failingRow),
    failingRow,
  )
  for (const id of [ids.completed, ids.ready, ids.active]) assert.ok(!rowOf(id).includes('\x1b'), rowOf(id))
  // The two commands ran at their own instants: a relative time ("now", "1s ago") and the padding
  // after it may differ by a second's worth.
  const withoutRelativeTimes = (text: string): string =>
    text.replace(/ \([^)]*\) */g, ' ').replace(/ +/g, ' ')
  assert.equal(
    withoutRelativeTimes(uncoloured(colored.stdout)),
    withoutRelativeTimes(plain.stdout),
    'the same table, uncoloured',
  )
  assert.ok(!plain.stdout.includes('\x1b'), plain.stdout)
  assert.ok(error.stderr.startsWith(`${red}ferry: --state: "bogus" is not a state`), error.stderr)
  assert.ok(error.stderr.endsWith(`${end}\n`), error.stderr)
})

test('jobs --json prints an array of every field with ISO 8601 instants, filtered by --state and --queue', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const ids = await seed(store)
  const [all, dead, images] = await Promise.all([
    runCli(db.url, ['jobs', '--json']),
    runCli(db.url, ['jobs', '--state', 'dead', '--queue', 'mail', '--json']),
    runCli(db.url, ['jobs', '--queue', 'images', '--json']),
  ])
  for (const result of [all, dead, images]) assert.equal(result.code, 0, result.stderr)
  const listed = JSON.parse(all.stdout) as Record<string, unknown>[]
  assert.deepEqual(
    listed.map((job) => job.id),
    [ids.active, ids.scheduled, ids.ready, ids.dead, ids.completed],
  )
  for (const job of listed) {
    assert.deepEqual(Object.keys(job), JOB_JSON_KEYS)
    assert.deepEqual(job, expectedJson((await getJob(store, job.id as string))!))
  }
  assert.deepEqual(JSON.parse(dead.stdout), [expectedJson((await getJob(store, ids.dead))!)])
  assert.deepEqual(
    (JSON.parse(images.stdout) as { id: string }[]).map((job) => job.id),
    [ids.active, ids.scheduled],
  )
})

test('jobs --limit shows at most that many, says on stderr that more match, and reads past one page', async (t) => {
  const db = tempDatabase(t)
  const client = createClient({ store: await db.open() })
  const enqueued = await client.enqueueMany(
    Array.from({ length: 1005 }, (_, seq) => ({ name: 'bulk', payload: { seq } })),
  )
  const newestFirst = enqueued.map((result) => result.id).reverse()
  const [two, many] = await Promise.all([
    runCli(db.url, ['jobs', '--limit', '2']),
    runCli(db.url, ['jobs', '--limit', '1002', '--json']),
  ])
  assert.equal(two.code, 0)
  assert.deepEqual(
    tableRows(two.stdout)
      .slice(1)
      .map((row) => row[0]),
    newestFirst.slice(0, 2),
  )
  assert.equal(two.stderr, '(the newest 2 shown; more match: raise --limit)\n')
  assert.equal(many.code, 0)
  assert.deepEqual(
    (JSON.parse(many.stdout) as { id: string }[]).map((job) => job.id),
    newestFirst.slice(0, 1002),
  )
})

test('jobs show prints every field, the payload pretty-printed, the error with its stack and the result', async (t) => {
  const db = tempDatabase(t)
  const ids = await seed(await db.open())
  const [dead, completed, scheduled] = await Promise.all([
    runCli(db.url, ['jobs', 'show', ids.dead]),
    runCli(db.url, ['jobs', 'show', ids.completed]),
    runCli(db.url, ['jobs', 'show', ids.scheduled]),
  ])
  for (const result of [dead, completed, scheduled]) {
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stderr, '')
  }
  const lines = dead.stdout.trimEnd().split('\n')
  const field = (label: string): string | undefined =>
    lines
      .find((line) => line.startsWith(`${label}:`))
      ?.slice(label.length + 1)
      .trim()
  assert.equal(field('id'), ids.dead)
  assert.equal(field('queue'), 'mail')
  assert.equal(field('name'), 'send-email')
  assert.equal(field('state'), 'dead')
  assert.equal(field('priority'), '0')
  assert.equal(field('attempts'), '1 of 25')
  assert.equal(field('timeout'), "the worker's default")
  assert.equal(field('unique key'), '-')
  for (const label of ['run at', 'created at', 'updated at', 'finished at']) {
    assert.match(field(label) ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(/, label)
  }
  assert.equal(field('worker'), '-')
  assert.equal(field('lease expires at'), '-')
  const after = (label: string): string => {
    const start = lines.indexOf(`${label}:`)
    assert.ok(start >= 0, `no ${label} section`)
    const end = lines.findIndex((line, i) => i > start && !line.startsWith(' '))
    return lines.slice(start + 1, end === -1 ? undefined : end).join('\n')
  }
  assert.equal(after('payload'), '  {\n    "to": "bob@example.com"\n  }')
  assert.equal(
    after('last error'),
    [
      `  error (TypeError): ${HANDLER_ERROR.message}`,
      '  stack:',
      '    TypeError: cannot read properties of undefined',
      '        at render (jobs.js:12:7)',
      '        at send (jobs.js:30:3)',
    ].join('\n'),
  )
  assert.equal(after('result'), '  -')
  assert.match(completed.stdout, /\nresult:\n {2}\{\n {4}"sent": true\n {2}\}\nlogs:\n {2}-\n$/)
  assert.match(completed.stdout, /\nlast error:\n {2}-\n/)
  assert.match(scheduled.stdout, /\ntimeout: +30s\n/)
  assert.match(scheduled.stdout, /\nrun at: +\S+ \S+ \(in 9m \d+s\)\n/)
})

test("jobs show prints a running job's progress and its log lines, control characters escaped", async (t) => {
  const db = tempDatabase(t)
  const ids = await seed(await db.open())
  const [active, dead] = await Promise.all([
    runCli(db.url, ['jobs', 'show', ids.active]),
    runCli(db.url, ['jobs', 'show', ids.dead]),
  ])
  assert.equal(active.code, 0, active.stderr)
  assert.match(active.stdout, /\nprogress: +\{"resized":3,"of":4\}\n/)
  assert.match(
    active.stdout,
    /\nlogs \(the last 2 lines kept\):\n {2}loaded 1280x960\n {2}wrote \\u001b\[2Jthumb\n$/,
  )
  assert.ok(!active.stdout.includes('\x1b'), 'no escape character reaches the terminal')
  assert.match(dead.stdout, /\nprogress: +-\n/)
  assert.match(dead.stdout, /\nlogs:\n {2}-\n$/)
})

test('jobs show --json prints the job as one object with every field', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const ids = await seed(store)
  // --json after the id, and before it.
  const [active, dead] = await Promise.all([
    runCli(db.url, ['jobs', 'show', ids.active, '--json']),
    runCli(db.url, ['jobs', 'show', '--json', ids.dead]),
  ])
  assert.equal(active.code, 0, active.stderr)
  const shown = JSON.parse(active.stdout) as Record<string, unknown>
  assert.deepEqual(Object.keys(shown), JOB_JSON_KEYS)
  const job = (await getJob(store, ids.active))!
  assert.deepEqual(shown, expectedJson(job))
  assert.equal(shown.workerId, 'worker-7')
  assert.equal(shown.uniqueKey, 'resize-1280')
  assert.match(shown.leaseExpiresAt as string, /Z$/)
  assert.equal(dead.code, 0, dead.stderr)
  assert.deepEqual((JSON.parse(dead.stdout) as { lastError: unknown }).lastError, HANDLER_ERROR)
})

test('jobs show of an unknown id prints one line on stderr and exits 2', async (t) => {
  const db = tempDatabase(t)
  await seed(await db.open())
  const [missing, malformed] = await Promise.all([
    runCli(db.url, ['jobs', 'show', '999']),
    runCli(db.url, ['jobs', 'show', 'abc', '--json']),
  ])
  assert.deepEqual(missing, {
    code: 2,
    stdout: '',
    stderr: 'ferry: job 999 does not exist [job_not_found]\n',
  })
  assert.deepEqual(malformed, {
    code: 2,
    stdout: '',
    stderr:
      'ferry: id: "abc" is not a job id (ids are whole numbers from 1, as ferry enqueue prints them) [invalid_option]\n',
  })
})

test('a bad option value is refused with one line naming the option, exit 2 and nothing done', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  await seed(store)
  const cases: [string[], RegExp][] = [
    [
      ['jobs', '--state', 'bogus'],
      /^ferry: --state: "bogus" is not a state \(use scheduled, ready, active, completed, dead\)/,
    ],
    [['jobs', '--limit', '0'], /^ferry: --limit: "0" is not a positive integer/],
    [['jobs', '--limit', 'ten'], /^ferry: --limit: "ten" is not a positive integer/],
    [['jobs', '--queue', 'no spaces'], /^ferry: --queue: must be 1 to 128 characters/],
    [['purge', '--state', 'dead', '--older-than', '7x'], /^ferry: --older-than: "7x" is not a duration/],
    [['purge', '--state', 'active'], /^ferry: --state: "active" cannot be purged \(use completed or dead\)/],
    [['retry', '--all-dead', '--queue', 'no spaces'], /^ferry: --queue: must be 1 to 128 characters/],
  ]
  const results = await Promise.all(cases.map(([args]) => runCli(db.url, args)))
  for (const [i, { code, stdout, stderr }] of results.entries()) {
    const label = cases[i]![0].join(' ')
    assert.equal(code, 2, `${label}: ${stderr}`)
    assert.equal(stdout, '', label)
    assert.match(stderr, cases[i]![1], label)
    assert.equal(stderr.split('\n').length, 2, `${label}: one line expected, got:\n${stderr}`)
  }
  const stats = await store.stats()
  assert.deepEqual(
    stats.map(({ queue, completed, dead }) => [queue, completed, dead]),
    [
      ['images', 0, 0],
      ['mail', 1, 1],
    ],
  )
})
