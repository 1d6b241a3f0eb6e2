/**
 * Durability on Redis: with appendonly yes and appendfsync always, an enqueue Redis acknowledged
 * is in the append-only file, so it survives a SIGKILL of redis-server. The test runs its own
 * redis-server (free port, temp directory), kills it in the middle of a stream of enqueues,
 * starts it again on the same files and looks for every acknowledged job.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import { createClient } from '../../src/client/client.js'
import { RedisStore } from '../../src/redis.js'
import { allJobs } from '../support/store-harness.js'
import { ownServerOptions, startOwnRedisServer, redisUnreachableReason } from '../support/redis-harness.js'
import { whenAvailable } from '../support/services.js'
import { sleep, within } from '../support/async.js'

/** Producers enqueueing at once, each one job after the other, and one enqueueMany batch producer. */
const PRODUCERS = 8

await whenAvailable(redisUnreachableReason(), () => {
  describe('RedisStore durability (own redis-server, appendfsync always)', () => {
    it(
      'keeps every acknowledged enqueue when redis-server is SIGKILLed mid-stream',
      ownServerOptions(),
      async () => {
        const server = await startOwnRedisServer({ appendfsync: 'always' })
        try {
          const warnings: string[] = []
          const store = await RedisStore.open({
            url: server.url,
            namespace: 'durability',
            onWarning: (m) => warnings.push(m),
          })
          assert.deepEqual(warnings, [], 'AOF with appendfsync always gives no warning')
          const client = createClient({ store })
          const acknowledged: number[] = []
          let seq = 0
          let stopped = false
          const producer = async (batch: number): Promise<void> => {
            while (!stopped) {
              const first = seq
              seq += batch
              try {
                if (batch === 1) {
                  await client.enqueue('durable.job', { seq: first })
                } else {
                  await client.enqueueMany(
                    Array.from({ length: batch }, (_, i) => ({
                      name: 'durable.job',
                      payload: { seq: first + i },
                    })),
                  )
                }
              } catch {
                return // the server is gone: this one was not acknowledged
              }
              for (let i = 0; i < batch; i++) acknowledged.push(first + i)
            }
          }
          const producers = [...Array.from({ length: PRODUCERS }, () => producer(1)), producer(50)]
          // Let the stream run, then kill the server under it.
          const deadline = Date.now() + 5000
          while (acknowledged.length < 300 && Date.now() < deadline) await sleep(5)
          await server.kill()
          stopped = true
          await within(10_000, 'the producers to give up', Promise.all(producers))
          await store.close()
          assert.ok(acknowledged.length >= 300, `only ${acknowledged.length} enqueues were acknowledged`)

          await server.start()
          const reopened = await RedisStore.open({
            url: server.url,
            namespace: 'durability',
            onWarning: () => {},
          })
          try {
            const stored = new Set(
              (await allJobs(reopened)).map((job) => (job.payload as { seq: number }).seq),
            )
            const lost = acknowledged.filter((s) => !stored.has(s))
            assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged jobs were lost`)
          } finally {
            await reopened.close()
          }
        } finally {
          await server.close()
        }
      },
    )

    it(
      'warns at open when the server cannot keep an acknowledged enqueue through a crash',
      ownServerOptions(),
      async () => {
        const server = await startOwnRedisServer({ appendfsync: 'always' })
        try {
          const warningsWith = async (settings: Record<string, string>): Promise<string[]> => {
            const admin = await RedisStore.open({ url: server.url, namespace: 'warn', onWarning: () => {} })
            await admin.close()
            const { Redis } = await import('ioredis')
            const redis = new Redis(server.url)
            for (const [key, value] of Object.entries(settings)) await redis.config('SET', key, value)
            redis.disconnect()
            const warnings: string[] = []
            const store = await RedisStore.open({
              url: server.url,
              namespace: 'warn',
              onWarning: (m) => warnings.push(m),
            })
            await store.close()
            return warnings
          }
          const everysec = await warningsWith({ appendonly: 'yes', appendfsync: 'everysec' })
          assert.equal(everysec.length, 1)
          assert.match(everysec[0]!, /appendfsync everysec/)
          const osSync = await warningsWith({ appendonly: 'yes', appendfsync: 'no' })
          assert.equal(osSync.length, 1)
          assert.match(osSync[0]!, /appendfsync no/)
          const none = await warningsWith({ appendonly: 'no' })
          assert.equal(none.length, 1)
          assert.match(none[0]!, /appendonly no/)
          assert.deepEqual(await warningsWith({ appendonly: 'yes', appendfsync: 'always' }), [])
        } finally {
          await server.close()
        }
      },
    )
  })
})
