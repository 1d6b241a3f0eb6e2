/**
 * The store's code runs as the functions of one library (FUNCTION LOAD at open, then FCALL). The
 * library is loaded on the server when a store opens, so the first burst of calls after a start is
 * sent once; a library the server lost later (a restart without persistence, FUNCTION FLUSH) is
 * loaded again, and the call still succeeds. Where functions may not be loaded (an ACL without
 * FUNCTION), the same code runs as scripts, by SHA (EVALSHA), each put in the server's cache at
 * open and sent again with its source when missing from it.
 */
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { Redis } from 'ioredis'

import { createClient, type Client } from '../../src/client/client.js'
import { commandStats } from '../../bench/lib/redis.js'
import { StoreUnavailableError } from '../../src/core/errors.js'
import { RedisStore } from '../../src/redis.js'
import { ownServerOptions, startOwnRedisServer } from '../support/redis-harness.js'
import { defer } from '../support/cleanup.js'

/**
 * A store just opened on a redis-server of the test's own, with a client and an admin connection.
 * `functions: false`: the store connects as a user that may not use FUNCTION, so it runs scripts.
 */
async function onFreshServer(
  t: TestContext,
  { functions = true }: { functions?: boolean } = {},
): Promise<{ admin: Redis; store: RedisStore; client: Client }> {
  const server = await startOwnRedisServer({ appendfsync: 'no' })
  defer(t, () => server.close())
  const admin = new Redis(server.url)
  defer(t, () => admin.disconnect())
  let url = server.url
  if (!functions) {
    await admin.call('ACL', 'SETUSER', 'scripts', 'on', '>secret', '~*', '&*', '+@all', '-function')
    url = server.url.replace('redis://', 'redis://scripts:secret@')
  }
  const store = await RedisStore.open({ url, namespace: 'scripts', onWarning: () => {} })
  defer(t, () => store.close())
  const client = createClient({ store })
  defer(t, () => client.close())
  return { admin, store, client }
}

/** The libraries of functions on a server, by name. */
async function libraries(admin: Redis): Promise<string[]> {
  const list = (await admin.call('FUNCTION', 'LIST')) as unknown[][]
  return list.map((library) => String(library[library.indexOf('library_name') + 1])).sort()
}

describe('RedisStore functions', ownServerOptions(), () => {
  it('are loaded once a store is open: a burst on a fresh server is sent once, by FCALL', async (t) => {
    const { admin, client } = await onFreshServer(t)

    // 3,000 enqueues in one tick go as 3 calls pipelined before any reply could say it failed.
    await Promise.all(Array.from({ length: 3000 }, (_, i) => client.enqueue('scripts.job', { i })))

    const fcall = await commandStats(admin, 'fcall')
    assert.ok(fcall.calls >= 3, `the enqueues ran as functions (${fcall.calls} calls)`)
    assert.equal(fcall.failed, 0, 'no call came back without its function')
    assert.equal((await commandStats(admin, 'evalsha')).calls, 0, 'no script ran')
    assert.equal((await commandStats(admin, 'eval')).calls, 0)
    const [library, ...others] = await libraries(admin)
    assert.match(library!, /^ferry_[0-9a-f]{16}$/, 'one library, named by a hash of its code')
    assert.deepEqual(others, [])
  })

  it('lost by the server (FUNCTION FLUSH) are loaded again, and the calls succeed', async (t) => {
    const { admin, store, client } = await onFreshServer(t)

    await admin.call('FUNCTION', 'FLUSH')
    const results = await Promise.all(
      Array.from({ length: 2500 }, (_, i) => client.enqueue('scripts.job', { i })),
    )
    assert.equal(new Set(results.map((result) => result.id)).size, 2500, 'every job was enqueued, once')
    assert.equal((await store.stats()).find((queue) => queue.queue === 'default')?.ready, 2500)
    assert.ok((await commandStats(admin, 'function\\|load')).calls >= 2, 'the library was loaded again')
    assert.equal((await commandStats(admin, 'evalsha')).calls, 0, 'no script ran')
  })

  it("leave another Ferry version's library alone, which keeps working beside them", async (t) => {
    const { admin, client } = await onFreshServer(t)
    const other = 'ferry_0000000000000000'
    await admin.call(
      'FUNCTION',
      'LOAD',
      `#!lua name=${other}\nredis.register_function('${other}_enqueue', function() return 'other' end)`,
    )

    await client.enqueue('scripts.job', {})
    assert.equal(await admin.call('FCALL', `${other}_enqueue`, 0), 'other')
    assert.equal((await libraries(admin)).length, 2)
  })

  it('refuse an enqueue on a Redis out of memory, and let workers settle, claim and purge', async (t) => {
    const { admin, store } = await onFreshServer(t)
    const job = {
      queue: 'default',
      name: 'scripts.job',
      payload: '{}',
      priority: 0,
      runAt: null,
      uniqueUntil: 'purged' as const,
      uniqueForMs: null,
      debounceMs: null,
      group: null,
      expiresAt: null,
      expiresInMs: null,
      schedule: null,
      backoff: null,
      keepForMs: null,
    }
    const jobs = [
      { ...job, delayMs: 0, maxAttempts: 1, timeoutMs: null, uniqueKey: null },
      { ...job, delayMs: 0, maxAttempts: 1, timeoutMs: null, uniqueKey: null },
    ]
    await store.enqueue({ jobs })
    const [first] = await store.claim({ queues: ['default'], limit: 1, leaseMs: 30_000, workerId: 'w' })
    // Full: maxmemory below what the server holds already, and no eviction.
    await admin.config('SET', 'maxmemory-policy', 'noeviction')
    await admin.config('SET', 'maxmemory', '1mb')
    defer(t, () => admin.config('SET', 'maxmemory', '0'))

    await assert.rejects(store.enqueue({ jobs: jobs.slice(0, 1) }), (error: unknown) => {
      assert.ok(error instanceof StoreUnavailableError)
      assert.match(error.message, /OOM/)
      return true
    })
    const settled = await store.settle({
      settlements: [{ kind: 'completed', id: first!.id, leaseToken: first!.leaseToken }],
    })
    assert.deepEqual(settled.settled, ['ok'])
    const [second] = await store.claim({ queues: ['default'], limit: 1, leaseMs: 30_000, workerId: 'w' })
    assert.ok(second)
    assert.ok((await store.stats()).length > 0)
    assert.equal(await store.purge({ state: 'completed', olderThanMs: 0 }), 1)
  })
})

describe('RedisStore scripts (where functions may not be loaded)', ownServerOptions(), () => {
  it('are in the server cache once a store is open: a burst on a fresh server is sent once', async (t) => {
    const { admin, client } = await onFreshServer(t, { functions: false })

    // 3,000 enqueues in one tick go as 3 scripts pipelined before any reply could say NOSCRIPT.
    await Promise.all(Array.from({ length: 3000 }, (_, i) => client.enqueue('scripts.job', { i })))

    const evalsha = await commandStats(admin, 'evalsha')
    assert.ok(evalsha.calls >= 3, `the enqueues ran by SHA (${evalsha.calls} calls)`)
    assert.equal(evalsha.failed, 0, 'no call came back NOSCRIPT')
    assert.equal((await commandStats(admin, 'eval')).calls, 0, 'no script was sent with its source')
  })

  it('missing from the cache (SCRIPT FLUSH) are sent again with their source, and the calls succeed', async (t) => {
    const { admin, store, client } = await onFreshServer(t, { functions: false })

    await admin.script('FLUSH')
    const results = await Promise.all(
      Array.from({ length: 2500 }, (_, i) => client.enqueue('scripts.job', { i })),
    )
    assert.equal(new Set(results.map((result) => result.id)).size, 2500, 'every job was enqueued, once')
    assert.equal((await store.stats()).find((queue) => queue.queue === 'default')?.ready, 2500)
    assert.ok((await commandStats(admin, 'eval')).calls >= 1, 'the script was sent with its source')
  })
})
