/**
 * A worker on Redis rides out a dropped connection and a restarted server by itself: it reconnects,
 * subscribes again, reloads its scripts (the server's script cache is empty after a restart: NOSCRIPT),
 * and then runs a job enqueued afterwards. A wake-up lost without any sign is caught by the
 * safety net, a look at the queues every 30 s while workers wait.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Redis } from 'ioredis'

import { createClient } from '../../src/client/client.js'
import { RedisStore } from '../../src/redis.js'
import { sleep, waitForEvent, within } from '../support/async.js'
import { defer } from '../support/cleanup.js'
import {
  dropNamespace,
  openTestStore,
  ownServerOptions,
  redisUnreachableReason,
  startOwnRedisServer,
  tempNamespace,
  TEST_REDIS_URL,
  uniqueNamespace,
} from '../support/redis-harness.js'
import { startWorker } from '../support/workers.js'
import { whenAvailable } from '../support/services.js'
import { getJob, waitReason } from '../support/store-calls.js'

const JOB = 'reconnect.job'

await whenAvailable(redisUnreachableReason(), () => {
  describe('RedisStore reconnects', () => {
    it('runs a job enqueued after its connections were killed by the server', async (t) => {
      const namespace = uniqueNamespace('reconnect')
      defer(t, () => dropNamespace(namespace))
      const connectionName = `ferry-test-${namespace}`
      const store = await openTestStore(namespace, { connection: { connectionName } })
      defer(t, () => store.close())
      const producer = await openTestStore(namespace)
      defer(t, () => producer.close())
      const { worker } = await startWorker(t, {
        store,
        handlers: { [JOB]: async () => {} },
        queues: ['default'],
      })
      await sleep(200) // the worker is waiting, subscribed

      const admin = new Redis(TEST_REDIS_URL)
      try {
        const list = (await admin.client('LIST')) as string
        const ids = list
          .split('\n')
          .filter((line) => line.includes(` name=${connectionName} `))
          .map((line) => /^id=(\d+)/.exec(line)![1]!)
        assert.ok(ids.length >= 2, `the store's command and subscriber connections (found ${ids.length})`)
        for (const id of ids) await admin.client('KILL', 'ID', id)
      } finally {
        admin.disconnect()
      }

      const completed = waitForEvent(worker, 'job:completed', () => true, 10_000)
      const id = (await producer.enqueue({ jobs: [job()] }))[0]!.id
      const [done] = await completed
      assert.equal(done.id, id)
    })

    it(
      'runs a job enqueued after redis-server was killed and started again',
      ownServerOptions(),
      async (t) => {
        const server = await startOwnRedisServer({ appendfsync: 'always' })
        defer(t, () => server.close())
        const store = await RedisStore.open({ url: server.url, namespace: 'restart', onWarning: () => {} })
        defer(t, () => store.close())
        const { worker } = await startWorker(t, {
          store,
          handlers: { [JOB]: async () => {} },
          queues: ['default'],
        })
        const before = waitForEvent(worker, 'job:completed', () => true, 5000)
        const first = await RedisStore.open({ url: server.url, namespace: 'restart', onWarning: () => {} })
        defer(t, () => first.close())
        const client = createClient({ store: first })
        defer(t, () => client.close())
        await client.enqueue(JOB, { before: true })
        await before

        await server.kill()
        await sleep(300)
        await server.start()

        const producer = await RedisStore.open({ url: server.url, namespace: 'restart', onWarning: () => {} })
        defer(t, () => producer.close())
        const completed = waitForEvent(worker, 'job:completed', () => true, 15_000)
        const id = (await producer.enqueue({ jobs: [job()] }))[0]!.id
        const [done] = await completed
        assert.equal(done.id, id)
        assert.equal((await getJob(producer, id))?.state, 'completed')
      },
    )

    it('looks at its queues again when a wake-up message was lost', async (t) => {
      const { store, namespace } = await tempNamespace(t, 'safety-net')
      const producer = await openTestStore(namespace)
      defer(t, () => producer.close())
      t.mock.timers.enable({ apis: ['setInterval'] })
      const waiting = waitReason(store, { queues: ['default'] })
      let woken = false
      void waiting.then(() => (woken = true))
      await sleep(200) // subscribed, and its first look found nothing
      // The subscriber stops hearing the namespace's wake-ups without noticing, as a connection
      // that went away unseen would.
      const { subscriber } = (store as unknown as { waiting: { subscriber: Redis } }).waiting
      await subscriber.sunsubscribe(store.keys.channel)
      await producer.enqueue({ jobs: [job()] })
      await sleep(300)
      assert.equal(woken, false, 'the wake-up message was lost')
      t.mock.timers.tick(30_000)
      assert.equal(await within(2000, 'the safety net', waiting), 'notified')
    })
  })
})

function job(): Parameters<RedisStore['enqueue']>[0]['jobs'][number] {
  return {
    queue: 'default',
    name: JOB,
    payload: '{}',
    priority: 0,
    runAt: null,
    schedule: null,
    backoff: null,
    keepForMs: null,
    delayMs: 0,
    maxAttempts: 3,
    timeoutMs: null,
    uniqueKey: null,
    uniqueUntil: 'purged',
    uniqueForMs: null,
    debounceMs: null,
    group: null,
    expiresAt: null,
    expiresInMs: null,
  }
}
