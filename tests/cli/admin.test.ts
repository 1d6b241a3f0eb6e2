/**
 * `ferry retry`, `ferry cancel`, `ferry purge` and `ferry stop-workers`: each prints what it did
 * and the store shows it done.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { createClient, type Store } from '../../src/index.js'
import { finishJob } from './cli-harness.js'
import { runCli } from '../support/processes.js'
import { tempDatabase } from '../support/sqlite-harness.js'
import { getJob } from '../support/store-calls.js'

const DAY_MS = 86_400_000

/** Enqueues one job on `queue` and finishes it as `outcome`; returns its id. */
async function finished(
  store: Store,
  queue: string,
  outcome: 'completed' | 'dead',
  finishedAt = Date.now(),
): Promise<string> {
  await createClient({ store }).enqueue('task', { queue }, { queue })
  return finishJob(store, queue, outcome, { finishedAt })
}

async function stateOf(store: Store, id: string): Promise<string | undefined> {
  return (await getJob(store, id))?.state
}

test('retry moves the dead jobs given back to ready with fresh attempts and counts only those', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const dead = await finished(store, 'mail', 'dead')
  const otherDead = await finished(store, 'mail', 'dead')
  const completed = await finished(store, 'mail', 'completed')
  const { code, stdout, stderr } = await runCli(db.url, ['retry', dead, completed, '999'])
  assert.equal(stderr, '')
  assert.equal(code, 0)
  assert.equal(stdout, '1 job moved back to ready\n')
  const job = (await getJob(store, dead))!
  assert.deepEqual([job.state, job.attempts, job.finishedAt], ['ready', 0, null])
  assert.equal(await stateOf(store, otherDead), 'dead')
  assert.equal(await stateOf(store, completed), 'completed')
})

test('retry, cancel and jobs show refuse an id that is not one, exit 2, and change nothing', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const dead = await finished(store, 'mail', 'dead')
  const { id: ready } = await createClient({ store }).enqueue('task', null)
  const cases: [string[], string, string][] = [
    [['retry', dead, 'abc'], 'ids', 'abc'],
    [['retry', '0'], 'ids', '0'],
    [['cancel', ready, '12x'], 'ids', '12x'],
    [['cancel', '007'], 'ids', '007'],
    [['jobs', 'show', '1.5'], 'id', '1.5'],
  ]
  const results = await Promise.all(cases.map(([args]) => runCli(db.url, args)))
  for (const [i, { code, stdout, stderr }] of results.entries()) {
    const [args, field, id] = cases[i]!
    assert.equal(code, 2, `${args.join(' ')}: ${stderr}`)
    assert.equal(stdout, '')
    assert.equal(
      stderr,
      `ferry: ${field}: "${id}" is not a job id (ids are whole numbers from 1, as ferry enqueue prints them) [invalid_option]\n`,
    )
  }
  assert.equal(await stateOf(store, dead), 'dead')
  assert.equal(await stateOf(store, ready), 'ready')
})

test('retry --all-dead moves every dead job, or those of --queue', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const mail = [await finished(store, 'mail', 'dead'), await finished(store, 'mail', 'dead')]
  const images = await finished(store, 'images', 'dead')
  const completed = await finished(store, 'images', 'completed')

  const ofMail = await runCli(db.url, ['retry', '--all-dead', '--queue', 'mail'])
  assert.equal(ofMail.code, 0, ofMail.stderr)
  assert.equal(ofMail.stdout, '2 jobs moved back to ready\n')
  for (const id of mail) assert.equal(await stateOf(store, id), 'ready')
  assert.equal(await stateOf(store, images), 'dead')

  const all = await runCli(db.url, ['retry', '--all-dead'])
  assert.equal(all.stdout, '1 job moved back to ready\n')
  assert.equal(await stateOf(store, images), 'ready')
  assert.equal(await stateOf(store, completed), 'completed')
})

test('retry without ids or --all-dead, or with both, is a usage error that changes nothing', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const dead = await finished(store, 'mail', 'dead')
  const [neither, both, queueAlone] = await Promise.all([
    runCli(db.url, ['retry']),
    runCli(db.url, ['retry', dead, '--all-dead']),
    runCli(db.url, ['retry', dead, '--queue', 'mail']),
  ])
  assert.equal(neither.code, 1)
  assert.match(neither.stderr, /^error: give the ids of jobs to retry, or --all-dead\n/)
  assert.equal(both.code, 1)
  assert.match(both.stderr, /^error: give job ids or --all-dead, not both\n/)
  assert.equal(queueAlone.code, 1)
  assert.match(queueAlone.stderr, /^error: --queue goes with --all-dead\n/)
  for (const result of [neither, both, queueAlone]) assert.equal(result.stdout, '')
  assert.equal(await stateOf(store, dead), 'dead')
})

test('cancel ends scheduled, ready and active jobs as dead and counts them, skipping finished and unknown ids', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const client = createClient({ store })
  const { id: scheduled } = await client.enqueue('task', null, { delayMs: 600_000 })
  const { id: active } = await client.enqueue('task', null)
  await store.claim({ queues: ['default'], limit: 1, leaseMs: 60_000, workerId: 'worker-1' })
  const { id: ready } = await client.enqueue('task', null)
  const completed = await finished(store, 'other', 'completed')

  const { code, stdout, stderr } = await runCli(db.url, [
    'cancel',
    scheduled,
    active,
    ready,
    completed,
    '999',
  ])
  assert.equal(stderr, '')
  assert.equal(code, 0)
  assert.equal(stdout, '3 jobs cancelled\n')
  for (const id of [scheduled, active, ready]) {
    const job = (await getJob(store, id))!
    assert.equal(job.state, 'dead')
    assert.equal(job.lastError?.kind, 'cancelled')
  }
  assert.equal(await stateOf(store, completed), 'completed')

  const none = await runCli(db.url, ['cancel'])
  assert.equal(none.code, 1)
  assert.match(none.stderr, /^error: missing required argument 'ids'/)
})

test('purge deletes finished jobs of one state, only those older than --older-than and of --queue if given', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const eightDaysAgo = Date.now() - 8 * DAY_MS
  const oldCompleted = await finished(store, 'mail', 'completed', eightDaysAgo)
  const oldCompletedImages = await finished(store, 'images', 'completed', eightDaysAgo)
  const newCompleted = await finished(store, 'mail', 'completed')
  const oldDead = await finished(store, 'mail', 'dead', eightDaysAgo)
  const newDead = await finished(store, 'mail', 'dead')
  const { id: ready } = await createClient({ store }).enqueue('task', null, { queue: 'mail' })

  const oldOfMail = await runCli(db.url, [
    'purge',
    '--state',
    'completed',
    '--older-than',
    '7d',
    '--queue',
    'mail',
  ])
  assert.equal(oldOfMail.code, 0, oldOfMail.stderr)
  assert.equal(oldOfMail.stdout, '1 job deleted\n')
  assert.equal(await getJob(store, oldCompleted), null)
  assert.equal(await stateOf(store, oldCompletedImages), 'completed')
  assert.equal(await stateOf(store, newCompleted), 'completed')

  const dead = await runCli(db.url, ['purge', '--state', 'dead'])
  assert.equal(dead.stdout, '2 jobs deleted\n')
  assert.equal(await getJob(store, oldDead), null)
  assert.equal(await getJob(store, newDead), null)
  assert.equal(await stateOf(store, ready), 'ready')
  assert.equal(await stateOf(store, oldCompletedImages), 'completed')

  const missingState = await runCli(db.url, ['purge'])
  assert.equal(missingState.code, 1)
  assert.match(missingState.stderr, /^error: required option '--state <state>' not specified/)
})

test('stop-workers records a stop request and says which workers it stops', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  assert.equal((await store.control()).stopRequestedAt, null)
  const before = Date.now()
  const { code, stdout, stderr } = await runCli(db.url, ['stop-workers'])
  assert.equal(stderr, '')
  assert.equal(code, 0)
  const requestedAt = (await store.control()).stopRequestedAt
  assert.ok(requestedAt !== null && requestedAt >= before && requestedAt <= Date.now())
  // In local time, as every instant in the human output (the tables too).
  assert.match(
    stdout,
    /^stop requested at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \((now|\d+s ago)\): workers started before then will stop after their current jobs\n$/,
  )
  const shown = /at (\S+ \S+)/.exec(stdout)![1]!.replace(' ', 'T')
  assert.ok(Math.abs(Date.parse(shown) - requestedAt) < 1000, `${shown} is the request's local time`)
})
