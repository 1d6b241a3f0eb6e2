/**
 * Scripts run by SHA (EVALSHA). A store puts them all in the server's cache when it opens, so the
 * first burst of calls after a start is sent once; a script missing from the cache later (a
 * restart, SCRIPT FLUSH) is sent again with its source, and the call still succeeds.
 */
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { Redis } from 'ioredis'

import { createClient, type Client } from '../../src/client/client.js'
import { commandStats } from '../../bench/lib/redis.js'
import { RedisStore } from '../../src/redis.js'
import { ownServerOptions, startOwnRedisServer } from '../support/redis-harness.js'
import { defer } from '../support/cleanup.js'

/** A store just opened on a redis-server of the test's own, with a client and an admin connection. */
async function onFreshServer(t: TestContext): Promise<{ admin: Redis; store: RedisStore; client: Client }> {
  const server = await startOwnRedisServer({ appendfsync: 'no' })
  defer(t, () => server.close())
  const admin = new Redis(server.url)
  defer(t, () => admin.disconnect())
  const store = await RedisStore.open({ url: server.url, namespace: 'scripts', onWarning: () => {} })
  defer(t, () => store.close())
  const client = createClient({ store })
  defer(t, () => client.close())
  return { admin, store, client }
}

describe('RedisStore scripts', ownServerOptions(), () => {
  it('are in the server cache once a store is open: a burst on a fresh server is sent once', async (t) => {
    const { admin, client } = await onFreshServer(t)

    // 3,000 enqueues in one tick go as 3 scripts pipelined before any reply could say NOSCRIPT.
    await Promise.all(Array.from({ length: 3000 }, (_, i) => client.enqueue('scripts.job', { i })))

    const evalsha = await commandStats(admin, 'evalsha')
    assert.ok(evalsha.calls >= 3, `the enqueues ran by SHA (${evalsha.calls} calls)`)
    assert.equal(evalsha.failed, 0, 'no call came back NOSCRIPT')
    assert.equal((await commandStats(admin, 'eval')).calls, 0, 'no script was sent with its source')
  })

  it('missing from the cache (SCRIPT FLUSH) are sent again with their source, and the calls succeed', async (t) => {
    const { admin, store, client } = await onFreshServer(t)

    await admin.script('FLUSH')
    const results = await Promise.all(
      Array.from({ length: 2500 }, (_, i) => client.enqueue('scripts.job', { i })),
    )
    assert.equal(new Set(results.map((result) => result.id)).size, 2500, 'every job was enqueued, once')
    assert.equal((await store.stats()).find((queue) => queue.queue === 'default')?.ready, 2500)
    assert.ok((await commandStats(admin, 'eval')).calls >= 1, 'the script was sent with its source')
  })
})
