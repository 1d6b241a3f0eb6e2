/**
 * `ferry workers`: the running workers from the store's registry, as a table and as JSON; and the
 * admin calls under it and the dashboard's throughput chart (listWorkers, getThroughput).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { getThroughput, listWorkers, ValidationError, type Store, type WorkerInfo } from '../../src/index.js'
import { runCli } from '../support/processes.js'
import { tempDatabase } from '../support/sqlite-harness.js'

const MINUTE = 60_000
/** Long enough for a `ferry` process to start on a busy machine. */
const TTL_MS = 60_000

function workerInfo(overrides: Partial<WorkerInfo>): WorkerInfo {
  return {
    workerId: 'web-1:4242:a1b2c3',
    host: 'web-1',
    pid: 4242,
    queues: ['mail', 'default'],
    concurrency: 8,
    strategy: 'threads',
    startedAt: Date.now() - 10 * MINUTE,
    jobs: [],
    activeCount: 0,
    ...overrides,
  }
}

async function beat(store: Store, worker: WorkerInfo, now = Date.now()): Promise<void> {
  await store.heartbeat({ worker, counts: [], ttlMs: TTL_MS, now })
}

test('workers lists the running workers by host and pid, with their last heartbeat', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const empty = await runCli(db.url, ['workers'])
  assert.deepEqual([empty.code, empty.stdout, empty.stderr], [0, 'no workers running\n', ''])

  const running = { id: '17', queue: 'mail', name: 'send', startedAt: Date.now() - 2000 }
  await beat(store, workerInfo({ jobs: [running], activeCount: 1 }), Date.now() - 3000)
  await beat(store, workerInfo({ workerId: 'api-2:7:ffffff', host: 'api-2', pid: 7, strategy: 'inline' }))
  // Past its ttl: not running any more.
  await beat(store, workerInfo({ workerId: 'gone', host: 'old' }), Date.now() - 2 * TTL_MS)

  const { code, stdout, stderr } = await runCli(db.url, ['workers'])
  assert.equal(stderr, '')
  assert.equal(code, 0)
  const lines = stdout.trimEnd().split('\n')
  assert.match(lines[0]!, /^HOST\s+PID\s+QUEUES\s+CONCURRENCY\s+STRATEGY\s+ACTIVE\s+HEARTBEAT\s+WORKER$/)
  assert.equal(lines.length, 3)
  assert.match(lines[1]!, /^api-2\s+7\s+mail,default\s+8\s+inline\s+0\s+\S+ ago\s+api-2:7:ffffff$/)
  assert.match(lines[2]!, /^web-1\s+4242\s+mail,default\s+8\s+threads\s+1\s+\d+s ago\s+web-1:4242:a1b2c3$/)

  const json = await runCli(db.url, ['workers', '--json'])
  assert.equal(json.code, 0)
  const report = JSON.parse(json.stdout) as { at: string; workers: Record<string, unknown>[] }
  assert.equal(typeof report.at, 'string')
  assert.deepEqual(
    report.workers.map((worker) => worker.workerId),
    ['api-2:7:ffffff', 'web-1:4242:a1b2c3'],
  )
  assert.deepEqual(report.workers[1]!.jobs, [
    { ...running, startedAt: new Date(running.startedAt).toISOString() },
  ])
  assert.equal(report.workers[1]!.activeCount, 1)
  assert.match(String(report.workers[1]!.heartbeatAt), /^\d{4}-\d\d-\d\dT/)
})

test('listWorkers and getThroughput answer plain data, the throughput with every minute for a chart', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const now = Math.floor(Date.now() / MINUTE) * MINUTE + 30_000
  const minute = now - 30_000
  await store.heartbeat({
    worker: workerInfo({}),
    counts: [
      { minute: minute - 2 * MINUTE, queue: 'mail', completed: 4, failed: 1 },
      { minute: minute - 2 * MINUTE, queue: 'default', completed: 1, failed: 0 },
      { minute, queue: 'mail', completed: 2, failed: 0 },
    ],
    ttlMs: 15_000,
    now,
  })
  const { at, workers } = await listWorkers(store, { now })
  assert.equal(at, now)
  assert.deepEqual(
    workers.map((worker) => [worker.workerId, worker.heartbeatAt]),
    [['web-1:4242:a1b2c3', now]],
  )

  const since = minute - 3 * MINUTE
  const report = await getThroughput(store, { since, until: minute + MINUTE })
  assert.equal(report.counts.length, 3)
  assert.deepEqual(report.minutes, [
    { minute: since, completed: 0, failed: 0 },
    { minute: since + MINUTE, completed: 5, failed: 1 },
    { minute: since + 2 * MINUTE, completed: 0, failed: 0 },
    { minute, completed: 2, failed: 0 },
  ])
  const mail = await getThroughput(store, { since, until: minute + MINUTE, queue: 'default' })
  assert.deepEqual(
    mail.minutes.map((point) => point.completed),
    [0, 1, 0, 0],
  )
  await assert.rejects(
    getThroughput(store, { since: minute, until: since }),
    (error: unknown) => error instanceof ValidationError && error.field === 'until',
  )
})
