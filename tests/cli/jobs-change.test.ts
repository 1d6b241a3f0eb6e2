/**
 * `ferry jobs change`: a job that has not started takes the changes given, and the command prints
 * it as changed; a started or unknown job, or a bad flag, exits with the error and changes nothing.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { createClient } from '../../src/index.js'
import { runCli } from '../support/processes.js'
import { tempDatabase } from '../support/sqlite-harness.js'
import { getJob } from '../support/store-calls.js'

const HOUR_MS = 3_600_000

test('jobs change runs a scheduled job now with a new priority, payload and attempts, and prints it', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const { id } = await createClient({ store }).enqueue('task', { n: 1 }, { delayMs: HOUR_MS })
  const before = Date.now()
  const flags = '--run-now --priority -5 --payload {"n":2} --max-attempts 3'.split(' ')
  const { code, stdout, stderr } = await runCli(db.url, ['jobs', 'change', id, ...flags])
  assert.equal(stderr, '')
  assert.equal(code, 0)
  assert.match(
    stdout,
    new RegExp(`^job ${id} changed: ready, priority -5, run at .+, 0 of 3 attempts used\\n$`),
  )
  const job = (await getJob(store, id))!
  assert.deepEqual([job.state, job.priority, job.payload, job.maxAttempts], ['ready', -5, { n: 2 }, 3])
  assert.ok(job.runAt >= before && job.runAt <= Date.now(), 'run at the time of the command')
})

test('jobs change --delay makes a ready job wait, and --json prints the job as jobs show does', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const { id } = await createClient({ store }).enqueue('task', null)
  const before = Date.now()
  const { code, stdout, stderr } = await runCli(db.url, ['jobs', 'change', id, '--delay', '1h', '--json'])
  assert.equal(stderr, '')
  assert.equal(code, 0)
  const printed = JSON.parse(stdout) as { id: string; state: string; runAt: string }
  assert.equal(printed.id, id)
  assert.equal(printed.state, 'scheduled')
  const job = (await getJob(store, id))!
  assert.equal(printed.runAt, new Date(job.runAt).toISOString())
  assert.ok(job.runAt >= before + HOUR_MS, 'an hour from the command')
  const shown = await runCli(db.url, ['jobs', 'show', id, '--json'])
  assert.deepEqual(JSON.parse(shown.stdout), printed)

  const at = await runCli(db.url, ['jobs', 'change', id, '--run-at', '2030-01-31T09:00:00Z'])
  assert.equal(at.code, 0, at.stderr)
  assert.equal((await getJob(store, id))!.runAt, Date.parse('2030-01-31T09:00:00Z'))
})

test('jobs change refuses an active or unknown job and bad flags, and changes nothing', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const client = createClient({ store })
  const { id: active } = await client.enqueue('task', null)
  await store.claim({ queues: ['default'], limit: 1, leaseMs: 60_000, workerId: 'worker-1' })
  const { id: ready } = await client.enqueue('task', { n: 1 })
  const cases: [string[], number, RegExp][] = [
    [
      ['jobs', 'change', active, '--priority', '1'],
      2,
      new RegExp(
        `^ferry: job ${active} is active: only a job that has not started .+ \\[job_not_changeable\\]\\n$`,
      ),
    ],
    [['jobs', 'change', '999', '--run-now'], 2, /^ferry: job 999 does not exist \[job_not_found\]\n$/],
    [['jobs', 'change', 'x', '--run-now'], 2, /^ferry: id: "x" is not a job id/],
    [['jobs', 'change', ready], 1, /^error: give what to change: --priority, --run-at/],
    [
      ['jobs', 'change', ready, '--run-now', '--delay', '5m'],
      1,
      /^error: give one of --run-at, --delay and --run-now/,
    ],
    [['jobs', 'change', ready, '--priority', 'high'], 2, /^ferry: --priority: "high" is not an integer from/],
    [
      ['jobs', 'change', ready, '--max-attempts', '0'],
      2,
      /^ferry: --max-attempts: "0" is not an integer from 1/,
    ],
    [['jobs', 'change', ready, '--payload', '{n:'], 2, /^ferry: --payload: is not valid JSON/],
    [
      ['jobs', 'change', ready, '--run-at', 'tomorrow'],
      2,
      /^ferry: --run-at: "tomorrow" is not an ISO 8601 date/,
    ],
  ]
  const results = await Promise.all(cases.map(([args]) => runCli(db.url, args)))
  for (const [i, { code, stdout, stderr }] of results.entries()) {
    const [args, exit, message] = cases[i]!
    assert.equal(code, exit, `${args.join(' ')}: ${stderr}`)
    assert.equal(stdout, '')
    assert.match(stderr, message, args.join(' '))
  }
  const job = (await getJob(store, ready))!
  assert.deepEqual([job.state, job.priority, job.payload], ['ready', 0, { n: 1 }])
  assert.equal((await getJob(store, active))!.priority, 0)
})
