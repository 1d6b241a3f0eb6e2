/**
 * The admin API (src/admin/) against real SQLite files: what a dashboard or a script gets from each
 * operation, and what it refuses. The `ferry` commands built on it are tested in tests/cli/.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import {
  cancelJobs,
  changeJob,
  createClient,
  JobNotChangeableError,
  JobNotFoundError,
  getJob,
  getStats,
  listJobs,
  purgeJobs,
  retryJobs,
  stopWorkers,
  ValidationError,
  withStore,
  type Store,
} from '../src/index.js'
import { finishJob } from './cli/cli-harness.js'
import { tempDatabase } from './support/sqlite-harness.js'

test('listJobs reads as many store pages as its limit takes, and its cursor goes on from there', async (t) => {
  const store = await tempDatabase(t).open()
  const enqueued = await createClient({ store }).enqueueMany(
    Array.from({ length: 1005 }, (_, i) => ({ name: 'task', payload: i })),
  )
  const newestFirst = enqueued.map(({ id }) => id).reverse()
  const first = await listJobs(store, { limit: 1002 })
  assert.deepEqual(
    first.jobs.map((job) => job.id),
    newestFirst.slice(0, 1002),
  )
  assert.notEqual(first.nextCursor, null)
  const rest = await listJobs(store, { limit: 10, cursor: first.nextCursor! })
  assert.deepEqual(
    rest.jobs.map((job) => job.id),
    newestFirst.slice(1002),
  )
  assert.equal(rest.nextCursor, null)
})

test('getStats counts per queue and in total, as plain data that JSON keeps as it is', async (t) => {
  const store = await tempDatabase(t).open()
  const client = createClient({ store })
  await client.enqueue('task', null, { queue: 'mail' })
  await client.enqueue('task', null, { queue: 'mail' })
  await client.enqueue('task', null, { queue: 'images', delayMs: 60_000 })
  await finishJob(store, 'mail', 'dead')
  const { jobs: readyJobs } = await store.listJobs({ queue: 'mail', state: 'ready' })
  const report = await getStats(store, { now: Date.now() })
  assert.deepEqual(JSON.parse(JSON.stringify(report)), report)
  const zero = { recentCompletedCount: 0, active: 0, completed: 0, expired: 0 }
  const running = {
    paused: null,
    limits: { concurrency: null, rate: null, groupConcurrency: null, groupRate: null },
  }
  assert.deepEqual(report.queues, [
    {
      queue: 'images',
      ...zero,
      ready: 0,
      scheduled: 1,
      dead: 0,
      recentDeadCount: 0,
      oldestReadyAt: null,
      ...running,
    },
    {
      queue: 'mail',
      ...zero,
      ready: 1,
      scheduled: 0,
      dead: 1,
      recentDeadCount: 1,
      oldestReadyAt: readyJobs[0]!.runAt,
      ...running,
    },
  ])
  assert.deepEqual(report.totals, { ...zero, ready: 1, scheduled: 1, dead: 1, recentDeadCount: 1 })
  assert.equal(report.recentWindowMs, 60_000)
})

test('retryJobs, cancelJobs, purgeJobs and stopWorkers say what they did', async (t) => {
  const store = await tempDatabase(t).open()
  const client = createClient({ store })
  await client.enqueue('task', null, { queue: 'mail' })
  const dead = await finishJob(store, 'mail', 'dead')
  const { id: ready } = await client.enqueue('task', null, { queue: 'mail' })
  assert.deepEqual(await retryJobs(store, { ids: [dead, ready] }), { movedCount: 1 })
  assert.deepEqual(await cancelJobs(store, { ids: [dead, '999'] }), { cancelledCount: 1 })
  assert.deepEqual(await purgeJobs(store, { state: 'dead' }), { deletedCount: 1 })
  assert.equal(await getJob(store, { id: dead }), null)
  assert.equal((await getJob(store, { id: ready }))?.state, 'ready')
  const { stopRequestedAt } = await stopWorkers(store)
  assert.equal(stopRequestedAt, (await store.control()).stopRequestedAt)
})

test('a bad param is a ValidationError naming it, and nothing is changed', async (t) => {
  const store = await tempDatabase(t).open()
  await createClient({ store }).enqueue('task', null, { queue: 'mail' })
  const dead = await finishJob(store, 'mail', 'dead')
  const cases: [() => Promise<unknown>, string][] = [
    [() => retryJobs(store, { ids: [dead, 'abc'] }), 'ids'],
    [() => cancelJobs(store, { ids: ['007'] }), 'ids'],
    [() => getJob(store, { id: '1.5' }), 'id'],
    [() => listJobs(store, { limit: 0 }), 'limit'],
    [() => listJobs(store, { limit: 2.5 }), 'limit'],
    [() => purgeJobs(store, { state: 'active' as 'dead' }), 'state'],
    [() => getStats(store, { recentWindow: 1 } as object), 'recentWindow'],
    [() => stopWorkers(store, { at: 1 } as object), 'at'],
  ]
  for (const [call, field] of cases) {
    await assert.rejects(call(), (error) => error instanceof ValidationError && error.field === field)
  }
  assert.equal((await getJob(store, { id: dead }))?.state, 'dead')
  assert.equal((await store.control()).stopRequestedAt, null)
})

test('withStore closes the store whether its work returns or throws', async (t) => {
  const { url } = tempDatabase(t)
  let opened: Store | undefined
  assert.equal(
    await withStore({ url }, async (store) => {
      opened = store
      return (await getStats(store)).queues.length
    }),
    0,
  )
  await assert.rejects(opened!.stats(), { code: 'store_closed' })
  const failure = new Error('the work failed')
  await assert.rejects(
    withStore({ url }, async (store) => {
      opened = store
      throw failure
    }),
    failure,
  )
  await assert.rejects(opened!.stats(), { code: 'store_closed' })
})

test('changeJob returns the job as changed, and names a bad field as given', async (t) => {
  const store = await tempDatabase(t).open()
  const { id } = await createClient({ store }).enqueue('task', { n: 1 }, { delayMs: 3_600_000 })
  const runAt = new Date(Date.now() - 1000)
  const job = await changeJob(store, id, { priority: 3, runAt, payload: { n: 2 }, maxAttempts: 4 })
  assert.deepEqual(
    [job.state, job.priority, job.runAt, job.payload, job.maxAttempts],
    ['ready', 3, runAt.getTime(), { n: 2 }, 4],
  )
  const refused = async (call: Promise<unknown>, field: string): Promise<void> => {
    await assert.rejects(call, (error: unknown) => error instanceof ValidationError && error.field === field)
  }
  await refused(changeJob(store, id, { priority: 0.5 }), 'priority')
  await refused(
    changeJob(store, id, { payload: { big: 'x'.repeat(50) } }, { maxPayloadBytes: 20 }),
    'payload',
  )
  await refused(changeJob(store, id, {}), 'changes')
  await refused(changeJob(store, id, { runAt: new Date(Number.NaN) }), 'runAt')
  await refused(changeJob(store, 'x1', { priority: 1 }), 'id')
  assert.equal((await getJob(store, { id }))?.priority, 3)
})

test('changeJob refuses an unknown job with JobNotFoundError and a started one with JobNotChangeableError', async (t) => {
  const store = await tempDatabase(t).open()
  const client = createClient({ store })
  await assert.rejects(
    changeJob(store, '999', { priority: 1 }),
    (error: unknown) => error instanceof JobNotFoundError && error.code === 'job_not_found',
  )
  const { id: active } = await client.enqueue('task', null)
  await store.claim({ queues: ['default'], limit: 1, leaseMs: 60_000, workerId: 'worker-1' })
  await assert.rejects(changeJob(store, active, { priority: 1 }), (error: unknown) => {
    assert.ok(error instanceof JobNotChangeableError)
    assert.equal(error.code, 'job_not_changeable')
    assert.equal(error.jobId, active)
    assert.equal(error.state, 'active')
    assert.match(error.message, new RegExp(`^job ${active} is active: only a job that has not started`))
    return true
  })
  const { id: dead } = await client.enqueue('task', null)
  await cancelJobs(store, { ids: [dead] })
  await assert.rejects(
    changeJob(store, dead, { runAt: Date.now() }),
    (error: unknown) => error instanceof JobNotChangeableError && error.state === 'dead',
  )
  assert.equal((await getJob(store, { id: active }))?.priority, 0)
})
