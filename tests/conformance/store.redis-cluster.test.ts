/**
 * The conformance suite against a Redis Cluster of three masters started for this file: each test's
 * namespace hashes to a slot of one of them, so the suite runs on every node, reached from one
 * seed node through MOVED redirects, with wake-ups published on one node and heard on another.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'

import { ValidationError } from '../../src/core/errors.js'
import { openStore } from '../../src/store/open-store.js'
import { newJob } from '../support/store-harness.js'
import {
  ioredisVersion,
  ownServerOptions,
  redisHarness,
  startOwnRedisCluster,
} from '../support/redis-harness.js'
import { runStoreConformance } from './store.case.js'

const options = ownServerOptions()
if (options.skip !== undefined) {
  it('needs a Redis Cluster of its own', options, () => {})
} else {
  const cluster = await startOwnRedisCluster({ masters: 3 })
  after(() => cluster.close())
  runStoreConformance({
    name: `RedisStore on a Redis Cluster of 3 masters (ioredis ${ioredisVersion()})`,
    createHarness: redisHarness('cluster', { url: cluster.url, cluster: true }),
    skip: [],
  })

  describe('a cluster store URL', () => {
    it('?cluster=true reaches namespaces whose slots live on different nodes from one seed node', async () => {
      // Hash tags {a}, {b} and {c} fall in the slot ranges of three different masters.
      for (const namespace of ['a', 'b', 'c']) {
        const store = await openStore(`${cluster.url}?cluster=true&namespace=${namespace}`)
        try {
          const [enqueued] = await store.enqueue({ jobs: [newJob({ queue: 'mail' })] })
          const [claimed] = await store.claim({ queues: ['mail'], limit: 1, leaseMs: 10_000, workerId: 'w' })
          assert.equal(claimed?.id, enqueued?.id)
        } finally {
          await store.close()
        }
      }
    })

    it('refuses a cluster flag that is not true or false, and a database other than 0', async () => {
      await assert.rejects(openStore(`${cluster.url}?cluster=yes`), (error: unknown) => {
        assert.ok(error instanceof ValidationError)
        assert.match(error.message, /cluster/)
        return true
      })
      await assert.rejects(openStore(`${cluster.url}/3?cluster=true`), /database 0 only/)
    })
  })
}
