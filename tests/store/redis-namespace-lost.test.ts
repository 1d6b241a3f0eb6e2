/**
 * A Redis emptied under running workers (FLUSHALL, or a restart without persistence) is noticed,
 * not silently refilled: every script checks the namespace's instance marker, written at migrate
 * (lua/lib/prelude.lua). A running worker stops with 'store-lost' and an error that names the cause,
 * a producer's enqueue rejects with store_unavailable (not retryable), and no key of the
 * namespace is written again. A process that opens the emptied server afterwards starts a fresh
 * namespace; the stores that were running see a marker that is not theirs, and stop too.
 * Each test runs a redis-server of its own, since it empties or kills it.
 */
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { Redis } from 'ioredis'

import { createClient } from '../../src/client/client.js'
import { StoreUnavailableError } from '../../src/core/errors.js'
import { RedisStore } from '../../src/redis.js'
import type { Store } from '../../src/store/store.js'
import {
  ownServerOptions,
  redisUnreachableReason,
  startOwnRedisServer,
  type OwnRedisServer,
} from '../support/redis-harness.js'
import { whenAvailable } from '../support/services.js'
import { newJob } from '../support/store-harness.js'
import { waitFor, waitForEvent } from '../support/async.js'
import { defer } from '../support/cleanup.js'
import { startWorker } from '../support/workers.js'
import { getJob, waitReason } from '../support/store-calls.js'

const NAMESPACE = 'lost'
const JOB = 'lost.job'
const LEASE = { leaseMs: 30_000, workerId: 'w1' }

function openStore(server: OwnRedisServer): Promise<RedisStore> {
  return RedisStore.open({ url: server.url, namespace: NAMESPACE, onWarning: () => {} })
}

/** Every key of the namespace on the server. */
async function namespaceKeys(redis: Redis): Promise<string[]> {
  const keys: string[] = []
  let cursor = '0'
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `ferry:{${NAMESPACE}}:*`, 'COUNT', 1000)
    cursor = next
    keys.push(...found)
  } while (cursor !== '0')
  return keys.sort()
}

/** Asserts that `call` rejects with the store-lost error (a StoreUnavailableError, not retryable). */
async function rejectsAsLost(call: Promise<unknown>, cause: RegExp, what: string): Promise<void> {
  await assert.rejects(
    call,
    (error: unknown) => {
      assert.ok(error instanceof StoreUnavailableError, `${what}: ${String(error)}`)
      assert.equal(error.code, 'store_unavailable')
      assert.equal(error.retryable, false, `${what}: ${error.message}`)
      assert.match(error.message, /namespace 'lost' is gone/)
      assert.match(error.message, cause)
      return true
    },
    what,
  )
}

/**
 * A worker waiting for jobs on its own store, a producer with a client on another, and an admin
 * connection: the set-up of every test. A job waits on a queue the worker does not take.
 */
async function runningNamespace(t: TestContext, server: OwnRedisServer) {
  const workerStore = await openStore(server)
  defer(t, () => workerStore.close())
  const producer = await openStore(server)
  defer(t, () => producer.close())
  const client = createClient({ store: producer })
  defer(t, () => client.close().catch(() => {}))
  const admin = new Redis(server.url)
  admin.on('error', () => {})
  defer(t, () => admin.disconnect())
  const { worker } = await startWorker(t, {
    store: workerStore,
    handlers: { [JOB]: async () => {} },
    queues: ['default'],
  })
  const errors: unknown[] = []
  worker.on('worker:error', (error) => errors.push(error))
  await client.enqueue(JOB, { waiting: true }, { queue: 'elsewhere' })
  // Waiting, registered for deliveries (lua/wait-for-work.lua).
  await waitFor(async () => (await admin.hlen(workerStore.keys.waiters)) > 0, 5000, 'the worker to wait')
  return { worker, workerStore, producer, client, admin, errors }
}

await whenAvailable(redisUnreachableReason(), () => {
  describe('RedisStore when the server is emptied under running workers', () => {
    it(
      'FLUSHALL: the worker stops with store-lost, the enqueue rejects, and no key is written again',
      ownServerOptions(),
      async (t) => {
        const server = await startOwnRedisServer({ appendfsync: 'always' })
        defer(t, () => server.close())
        const { worker, client, admin, errors } = await runningNamespace(t, server)
        assert.ok((await namespaceKeys(admin)).length > 0)

        await admin.flushall()
        await rejectsAsLost(
          client.enqueue(JOB, { after: true }),
          /is missing: the server was emptied/,
          'enqueue',
        )
        assert.equal(await worker.stopped, 'store-lost')
        assert.match(String(worker.stopError), /namespace 'lost' is gone.*instance marker .* is missing/)
        assert.ok(errors.includes(worker.stopError), "the cause was reported as a 'worker:error'")
        assert.deepEqual(await namespaceKeys(admin), [], 'no key of the namespace was recreated')
      },
    )

    it(
      'a restart without persistence (SIGKILL): the worker stops with store-lost, the enqueue rejects, and no key is written again',
      ownServerOptions(),
      async (t) => {
        const server = await startOwnRedisServer({ appendonly: false })
        defer(t, () => server.close())
        const { worker, producer, client, admin, errors } = await runningNamespace(t, server)
        const stopping = waitForEvent(worker, 'worker:stopping', (reason) => reason === 'store-lost', 20_000)

        await server.kill()
        await server.start() // same port, nothing kept
        // The worker looks at its queues again once its subscription is back, and finds out.
        await stopping
        assert.equal(await worker.stopped, 'store-lost')
        assert.match(String(worker.stopError), /namespace 'lost' is gone.*instance marker .* is missing/)
        assert.ok(errors.includes(worker.stopError))
        // The producer's connection is back (a plain read), then its enqueue is refused.
        await waitFor(
          () =>
            producer.control().then(
              () => true,
              () => false,
            ),
          10_000,
          'the reconnect',
        )
        await rejectsAsLost(client.enqueue(JOB, { after: true }), /is missing/, 'enqueue')
        assert.deepEqual(await namespaceKeys(admin), [], 'no key of the namespace was recreated')
      },
    )

    it(
      'a process that opens the emptied server starts a fresh namespace, and the running stores stop',
      ownServerOptions(),
      async (t) => {
        const server = await startOwnRedisServer({ appendfsync: 'always' })
        defer(t, () => server.close())
        const { worker, client, admin } = await runningNamespace(t, server)
        await admin.flushall()

        const fresh = await openStore(server)
        defer(t, () => fresh.close())
        const [created] = await fresh.enqueue({ jobs: [newJob({ name: JOB })] })
        assert.equal(created!.id, '1', 'a fresh namespace: its ids start again')
        const keysOfFresh = await namespaceKeys(admin)

        await rejectsAsLost(
          client.enqueue(JOB, { stale: true }),
          /another process has started a fresh namespace/,
          'the old producer',
        )
        assert.equal(await worker.stopped, 'store-lost')
        assert.match(String(worker.stopError), /another process has started a fresh namespace/)
        assert.deepEqual(await namespaceKeys(admin), keysOfFresh, 'the old stores wrote nothing')
        assert.equal((await getJob(fresh, '1'))?.state, 'ready', "the fresh namespace's job is untouched")
      },
    )

    it(
      'every call of a store whose namespace was emptied is refused, and writes nothing',
      ownServerOptions(),
      async (t) => {
        const server = await startOwnRedisServer({ appendfsync: 'always' })
        defer(t, () => server.close())
        const store = await openStore(server)
        defer(t, () => store.close())
        const { id } = (await store.enqueue({ jobs: [newJob()] }))[0]!
        const [claimed] = await store.claim({ queues: ['default'], limit: 1, ...LEASE })
        const lease = { id, leaseToken: claimed!.leaseToken }
        const admin = new Redis(server.url)
        defer(t, () => admin.disconnect())
        await admin.flushall()

        const calls: [string, (store: Store) => Promise<unknown>][] = [
          ['enqueue', (s) => s.enqueue({ jobs: [newJob()] })],
          ['claim', (s) => s.claim({ queues: ['default'], limit: 1, ...LEASE })],
          ['settle', (s) => s.settle({ settlements: [{ kind: 'completed', ...lease }] })],
          [
            'settleAndClaim',
            (s) =>
              s.settle({
                settlements: [{ kind: 'completed', ...lease }],
                claim: { queues: ['default'], limit: 1, ...LEASE },
              }),
          ],
          ['renew', (s) => s.renew({ leases: [lease], leaseMs: 30_000 })],
          ['recoverExpired', (s) => s.recoverExpired()],
          ['cancel', (s) => s.cancel({ ids: [id] })],
          ['retry', (s) => s.retry({ allDead: true })],
          ['purge', (s) => s.purge({ state: 'completed' })],
          ['changeJobs', (s) => s.changeJobs({ changes: [{ id, priority: 1 }] })],
          ['stats', (s) => s.stats()],
          ['listJobs', (s) => s.listJobs()],
          ['requestStop', (s) => s.control({ requestStop: true })],
          ['schedules', (s) => s.schedules()],
          [
            'fireSchedule',
            (s) => s.fireSchedule({ id: 'nightly', version: 1, lastSlot: 0, toSlot: 0, jobs: [] }),
          ],
          [
            'heartbeat',
            (s) =>
              s.heartbeat({
                worker: {
                  workerId: 'w',
                  host: 'h',
                  pid: 1,
                  queues: ['default'],
                  concurrency: 1,
                  strategy: 'inline',
                  startedAt: 0,
                  jobs: [],
                  activeCount: 0,
                },
                counts: [],
                ttlMs: 15_000,
              }),
          ],
          ['removeWorker', (s) => s.removeWorker({ workerId: 'w' })],
          ['workers', (s) => s.workers()],
          ['throughput', (s) => s.throughput({ since: 0, until: 60_000 })],
          ['waitForWork', (s) => waitReason(s, { queues: ['default'], timeoutMs: 5000 })],
          ['migrate', (s) => s.migrate()],
        ]
        for (const [name, call] of calls) await rejectsAsLost(call(store), /is missing/, name)
        assert.deepEqual(await namespaceKeys(admin), [])
      },
    )
  })
})
