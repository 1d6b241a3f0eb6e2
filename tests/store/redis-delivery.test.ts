/**
 * Delivery on Redis (lua/lib/deliver.lua) beyond the conformance suite: registrations stay out of the
 * server's durable data, none outlives its wait or its store, and a delivery that reaches a store
 * whose waiter is gone is given back.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Redis } from 'ioredis'

import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

import { RedisStore } from '../../src/redis.js'
import { newJob } from '../support/store-harness.js'
import { within } from '../support/async.js'
import { defer } from '../support/cleanup.js'
import {
  openTestStore,
  ownServerOptions,
  redisUnreachableReason,
  startOwnRedisServer,
  tempNamespace,
  TEST_REDIS_URL,
} from '../support/redis-harness.js'
import { whenAvailable } from '../support/services.js'
import { getJob } from '../support/store-calls.js'

const CLAIM = { limit: 10, leaseMs: 60_000, workerId: 'w' }

async function open(t: Parameters<typeof defer>[0], namespace: string): Promise<RedisStore> {
  const store = await openTestStore(namespace)
  defer(t, () => store.close())
  return store
}

/**
 * Every append-only file of a server's directory (Redis 7 keeps them in appendonlydir/), as text,
 * without the store's library of functions (FUNCTION LOAD), which is there too and whose code names
 * every key, the waiters' among them.
 */
function readAof(dir: string): string {
  const aofDir = join(dir, 'appendonlydir')
  let text = readdirSync(aofDir)
    .filter((name) => name.endsWith('.aof'))
    .map((name) => readFileSync(join(aofDir, name), 'latin1'))
    .join('')
  const load = /\*3\r\n\$8\r\nFUNCTION\r\n\$4\r\nLOAD\r\n\$(\d+)\r\n/
  for (let found = load.exec(text); found !== null; found = load.exec(text)) {
    // latin1: one character per byte, as the length counts them; the code ends with \r\n.
    text = text.slice(0, found.index) + text.slice(found.index + found[0].length + Number(found[1]) + 2)
  }
  return text
}

await whenAvailable(redisUnreachableReason(), () => {
  describe('RedisStore delivery', () => {
    it('gives back, in place and with the attempt unused, jobs handed to a waiter that no longer waits', async (t) => {
      const { store: worker, namespace } = await tempNamespace(t, 'delivery')
      const producer = await open(t, namespace)
      const redis = new Redis(TEST_REDIS_URL)
      defer(t, () => redis.quit())
      // The worker store waits (so it is subscribed to its delivery channel) on another queue.
      const controller = new AbortController()
      const waiting = worker.waitForWork({ queues: ['other'], signal: controller.signal, claim: CLAIM })
      defer(t, async () => {
        controller.abort()
        await waiting
      })
      const channelPattern = `ferry:{${namespace}}:deliver:*`
      let channels: string[] = []
      const deadline = Date.now() + 5000
      while (channels.length === 0 && Date.now() < deadline) {
        channels = (await redis.pubsub('SHARDCHANNELS', channelPattern)) as string[]
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      assert.equal(channels.length, 1, 'the worker store subscribed to its delivery channel')
      // A registration for a waiter of that store that has stopped waiting, as when its wait ends
      // while an enqueue is already delivering to it.
      const waiters = `ferry:{${namespace}}:waiters`
      await redis.hset(
        waiters,
        `${channels[0]}:ended`,
        JSON.stringify({ c: channels[0], l: 10, m: 60_000, w: 'w', t: 'stale', q: ['default'] }),
      )
      const { id } = (await producer.enqueue({ jobs: [newJob()] }))[0]!
      // The store it reached puts it back: ready again, its attempt unused, claimable by anyone.
      let job = await getJob(producer, id)
      while (job?.state !== 'ready' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10))
        job = await getJob(producer, id)
      }
      assert.equal(job?.state, 'ready', 'given back')
      assert.equal(job.attempts, 0, 'attempt unused')
      assert.equal(job.workerId, null)
      const [claimed] = await producer.claim({ queues: ['default'], ...CLAIM, workerId: 'other-worker' })
      assert.equal(claimed?.id, id)
      assert.equal(claimed.attempts, 1)
      assert.equal(await redis.hexists(waiters, `${channels[0]}:ended`), 0, 'the registration was used up')
    })

    it('leaves no registration behind for a wait that ended before it was subscribed', async (t) => {
      const { store, namespace } = await tempNamespace(t, 'delivery') // not subscribed yet: its first wait subscribes
      const redis = new Redis(TEST_REDIS_URL)
      defer(t, () => redis.quit())
      const ended = await store.waitForWork({ queues: ['default'], timeoutMs: 0, claim: CLAIM })
      assert.deepEqual(ended, { reason: 'timeout', jobs: [] })
      await new Promise((resolve) => setTimeout(resolve, 300)) // the subscription has come
      assert.equal(await redis.hlen(`ferry:{${namespace}}:waiters`), 0)
      // A store closed while its worker waits takes its registration with it.
      const closing = await openTestStore(namespace)
      const waiting = closing.waitForWork({ queues: ['default'], claim: CLAIM })
      await new Promise((resolve) => setTimeout(resolve, 300))
      assert.equal(await redis.hlen(`ferry:{${namespace}}:waiters`), 1)
      await closing.close()
      assert.deepEqual(await within(1000, "the closed store's wait", waiting), {
        reason: 'aborted',
        jobs: [],
      })
      assert.equal(await redis.hlen(`ferry:{${namespace}}:waiters`), 0)
    })

    it('reads jobs too large to send in the delivery message', async (t) => {
      const { store: worker, namespace } = await tempNamespace(t, 'delivery')
      const producer = await open(t, namespace)
      const waiting = worker.waitForWork({
        queues: ['default'],
        timeoutMs: 5000,
        claim: { ...CLAIM, limit: 2 },
      })
      await new Promise((resolve) => setTimeout(resolve, 200))
      // Two payloads of 600,000 bytes: 1.2 MB together, past the 1 MB a message may carry.
      const payloads = ['a', 'b'].map((letter) => JSON.stringify(letter.repeat(600_000)))
      const results = await producer.enqueue({ jobs: payloads.map((payload) => newJob({ payload })) })
      const wake = await within(6000, 'waitForJobs', waiting)
      assert.equal(wake.reason, 'delivered')
      assert.deepEqual(
        wake.jobs.map((job) => [job.id, job.state, job.payload]),
        results.map(({ id }, i) => [id, 'active', JSON.parse(payloads[i]!)]),
      )
      assert.deepEqual(
        (
          await worker.settle({
            settlements: wake.jobs.map((job) => ({
              kind: 'completed',
              id: job.id,
              leaseToken: job.leaseToken,
              result: null,
            })),
          })
        ).settled,
        ['ok', 'ok'],
      )
    })

    it(
      'writes registrations neither to the AOF nor to replicas, and the delivered leases to both',
      ownServerOptions(),
      async (t) => {
        const server = await startOwnRedisServer({ appendfsync: 'always' })
        defer(t, () => server.close())
        const store = await RedisStore.open({ url: server.url, namespace: 'aof' })
        defer(t, () => store.close())
        const producer = await RedisStore.open({ url: server.url, namespace: 'aof' })
        defer(t, () => producer.close())
        const waiting = store.waitForWork({ queues: ['default'], timeoutMs: 5000, claim: CLAIM })
        await new Promise((resolve) => setTimeout(resolve, 200))
        const { id } = (await producer.enqueue({ jobs: [newJob()] }))[0]!
        const wake = await within(6000, 'waitForJobs', waiting)
        assert.equal(wake.reason, 'delivered')
        // Another wait registers and ends unused.
        assert.equal(
          (await store.waitForWork({ queues: ['default'], timeoutMs: 50, claim: CLAIM })).reason,
          'timeout',
        )
        const aof = readAof(server.dir)
        assert.ok(aof.includes(wake.jobs[0]!.leaseToken), 'the delivered lease is in the AOF')
        assert.ok(aof.includes(`job:${id}`))
        assert.ok(!aof.includes('waiters'), 'no registration is in the AOF')
      },
    )
  })
})
