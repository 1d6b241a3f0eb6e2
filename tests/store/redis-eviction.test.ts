/**
 * Redis with a maxmemory-policy that evicts keys deletes jobs when it is full. A store refuses such
 * a server at open unless the caller allowed it (allowEviction); allowed, every script that meets
 * what eviction left behind (an index entry whose job hash is gone) drops the entry instead of
 * failing, and never writes to the missing hash, which would recreate a job without its fields.
 * The refusal and the full-memory run use a redis-server of their own (its memory settings are
 * changed); the case-by-case tests delete job hashes on the shared server, as eviction would.
 */
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { Redis } from 'ioredis'

import { createClient } from '../../src/client/client.js'
import { StoreUnavailableError } from '../../src/core/errors.js'
import type { ClaimedJob } from '../../src/core/job.js'
import { openStore } from '../../src/store/open-store.js'
import { parseRedisUrl, RedisStore } from '../../src/redis.js'
import { defer } from '../support/cleanup.js'
import {
  ownServerOptions,
  redisUnreachableReason,
  startOwnRedisServer,
  tempNamespace,
  TEST_REDIS_URL,
} from '../support/redis-harness.js'
import { whenAvailable } from '../support/services.js'
import { allJobs, newJob } from '../support/store-harness.js'
import { getJob } from '../support/store-calls.js'

const LEASE = { leaseMs: 30_000, workerId: 'w' }

/** Every key matching `pattern` on the server. */
async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = []
  let cursor = '0'
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = next
    keys.push(...found)
  } while (cursor !== '0')
  return keys
}

/** Job hashes of the store's namespace that lack their queue field: what must never exist. */
async function hashesWithoutQueue(redis: Redis, store: RedisStore): Promise<string[]> {
  const keys = await scanKeys(redis, store.keys.job('*'))
  const pipeline = redis.pipeline()
  for (const key of keys) pipeline.hexists(key, 'q')
  const replies = (await pipeline.exec()) ?? []
  return keys.filter((_, i) => replies[i]![1] !== 1)
}

function admin(t: TestContext, url: string): Redis {
  const redis = new Redis(url)
  redis.on('error', () => {})
  defer(t, () => redis.disconnect())
  return redis
}

await whenAvailable(redisUnreachableReason(), () => {
  describe('RedisStore on a server that may evict keys', () => {
    it(
      'refuses to open unless allowEviction is given, naming the policy and the opt-in, also where CONFIG is forbidden',
      ownServerOptions(),
      async (t) => {
        const server = await startOwnRedisServer({ appendfsync: 'always' })
        defer(t, () => server.close())
        const redis = admin(t, server.url)
        // A user who may not run CONFIG, as on managed services: the policy is read from INFO.
        await redis.call('ACL', 'SETUSER', 'app', 'on', '>secret', '~*', '&*', '+@all', '-config')
        const appUrl = server.url.replace('redis://', 'redis://app:secret@')
        for (const policy of ['allkeys-lru', 'volatile-lru', 'allkeys-random']) {
          await redis.config('SET', 'maxmemory-policy', policy)
          for (const url of [server.url, appUrl]) {
            await assert.rejects(
              RedisStore.open({ url, namespace: 'refused', onWarning: () => {} }),
              (error: unknown) => {
                assert.ok(error instanceof StoreUnavailableError, String(error))
                assert.equal(error.retryable, false)
                assert.match(error.message, new RegExp(`maxmemory-policy ${policy}`))
                assert.match(error.message, /maxmemory-policy noeviction/)
                assert.match(error.message, /allowEviction: true \(\?allowEviction=true in a store URL/)
                return true
              },
            )
          }
        }
        assert.deepEqual(await scanKeys(redis, 'ferry:*'), [], 'nothing was written')

        const allowed = await RedisStore.open({
          url: appUrl,
          namespace: 'allowed',
          allowEviction: true,
          onWarning: () => {},
        })
        await allowed.close()
        const byUrl = await openStore(`${server.url}?namespace=allowed&allowEviction=true`)
        await byUrl.close()
        assert.equal(parseRedisUrl('redis://h?allowEviction=false').allowEviction, false)
        assert.throws(
          () => parseRedisUrl('redis://h?allowEviction=yes'),
          /allowEviction: must be true or false/,
        )

        await redis.config('SET', 'maxmemory-policy', 'noeviction')
        const store = await RedisStore.open({ url: appUrl, namespace: 'noeviction', onWarning: () => {} })
        await store.close()
      },
    )

    it(
      'with allowEviction, works on when full memory evicted jobs: no script error, and no job hash without its queue',
      ownServerOptions(),
      async (t) => {
        const server = await startOwnRedisServer({ appendonly: false })
        defer(t, () => server.close())
        const redis = admin(t, server.url)
        const store = await RedisStore.open({
          url: server.url,
          namespace: 'evicted',
          allowEviction: true,
          onWarning: () => {},
        })
        defer(t, () => store.close())
        const client = createClient({ store })
        defer(t, () => client.close())
        await redis.config('SET', 'maxmemory', String(8 * 2 ** 20))
        await redis.config('SET', 'maxmemory-policy', 'allkeys-lru')

        // Jobs in every index, on a clock of the test's own (`now`): ready ones with unique keys,
        // scheduled ones, and claimed ones of which some completed, some dead, some still active.
        const t0 = Date.now()
        const work = { queue: 'work', payload: JSON.stringify({ text: 'w'.repeat(500) }) }
        const first = await store.enqueue({
          now: t0,
          jobs: [
            ...Array.from({ length: 300 }, (_, i) => newJob({ ...work, uniqueKey: `key-${i}` })),
            ...Array.from({ length: 300 }, () => newJob({ ...work, delayMs: 60_000 })),
          ],
        })
        const claimed = await store.claim({ queues: ['work'], limit: 200, now: t0, ...LEASE })
        const finish = (jobs: ClaimedJob[], kind: 'completed' | 'dead') =>
          store.settle({
            now: t0,
            settlements: jobs.map((job) =>
              kind === 'completed'
                ? { kind, id: job.id, leaseToken: job.leaseToken }
                : { kind, id: job.id, leaseToken: job.leaseToken, error: { kind: 'error', message: 'x' } },
            ),
          })
        await finish(claimed.slice(0, 50), 'completed')
        await finish(claimed.slice(50, 100), 'dead')
        const active = claimed.slice(100)

        // Past memory: 16 MiB of jobs into 8 MiB, so Redis evicts.
        const filler = { text: 'f'.repeat(2000) }
        for (let batch = 0; batch < 40; batch++) {
          await client.enqueueMany(
            Array.from({ length: 200 }, () => ({
              name: 'fill',
              payload: filler,
              options: { queue: 'fill' },
            })),
          )
        }
        const evictedKeys = Number(/evicted_keys:(\d+)/.exec(await redis.info('stats'))![1])
        assert.ok(evictedKeys > 0, 'Redis evicted keys')
        const gone = await Promise.all(first.map(({ id }) => getJob(store, id).then((job) => job === null)))
        assert.ok(gone.some(Boolean), 'some of the first jobs were evicted')
        t.diagnostic(`${evictedKeys} keys evicted, ${gone.filter(Boolean).length} of the first 600 jobs`)

        // Every operation, on what is left; none may fail.
        const later = t0 + 120_000 // the scheduled jobs are due, the leases ran out
        // Eviction stops here: the damage is done, and what follows must work on it. With memory
        // full, Redis evicts before every command, so going on would make the checks random (a
        // holder the enqueue saw gone by the time the test reads it; every ready set evicted, so
        // that nothing is left to claim).
        await redis.config('SET', 'maxmemory', '0')
        const again = await store.enqueue({
          now: t0,
          jobs: Array.from({ length: 300 }, (_, i) => newJob({ ...work, uniqueKey: `key-${i}` })),
        })
        for (const { id, created } of again) {
          if (!created) assert.notEqual(await getJob(store, id), null, 'a held key names a stored job')
        }
        await store.enqueue({ now: t0, jobs: [newJob(work)] }) // one job at least to claim
        await store.renew({ now: t0, leases: active, leaseMs: 30_000 })
        await finish(active.slice(0, 20), 'completed')
        await store.recoverExpired({ now: later })
        let settlements: Parameters<RedisStore['settle']>[0]['settlements'] = []
        let taken = 0
        for (;;) {
          const { claimed: jobs } = await store.settle({
            now: later,
            settlements,
            claim: { queues: ['work', 'fill'], limit: 100, ...LEASE },
          })
          if (jobs.length === 0) break
          for (const job of jobs) assert.ok(job.queue !== null && job.name !== null, `job ${job.id} is whole`)
          taken += jobs.length
          settlements = jobs.map((job, i) =>
            i % 3 === 0
              ? {
                  kind: 'dead',
                  id: job.id,
                  leaseToken: job.leaseToken,
                  error: { kind: 'error', message: 'x' },
                }
              : { kind: 'completed', id: job.id, leaseToken: job.leaseToken },
          )
        }
        await store.settle({ now: later, settlements })
        assert.ok(taken > 0)
        await store.cancel({ ids: first.map(({ id }) => id) })
        await store.retry({ allDead: true, now: later })
        await store.stats({ now: later })
        for (const job of await allJobs(store)) assert.ok(job.queue !== null && job.name !== null)
        await store.purge({ state: 'completed', now: later + 1 })
        await store.purge({ state: 'dead', now: later + 1 })

        assert.deepEqual(await hashesWithoutQueue(redis, store), [], 'no job hash lacks its queue')
      },
    )
  })

  describe('RedisStore scripts meeting a job whose hash is gone (as eviction leaves it)', () => {
    /** A store on a fresh namespace of the shared server, an admin connection, and key names. */
    async function setUp(t: TestContext) {
      const { store } = await tempNamespace(t, 'evicted')
      const redis = admin(t, TEST_REDIS_URL)
      const [, ready, scheduled, completed, dead] = store.keys.scriptPrefixes
      const [, jobsIndex, activeSet] = store.keys.scriptKeys
      /** Deletes job hashes, as eviction does. */
      const evict = (...ids: string[]) => redis.del(...ids.map((id) => store.keys.job(id)))
      const exists = async (id: string) => (await redis.exists(store.keys.job(id))) === 1
      const inJobsIndex = async (id: string) => (await redis.zscore(jobsIndex!, id)) !== null
      return { store, redis, evict, exists, inJobsIndex, ready, scheduled, completed, dead, activeSet }
    }

    it('claim skips a ready or due job whose hash is gone, takes the next, and drops the entries', async (t) => {
      const { store, redis, evict, exists, inJobsIndex, ready, scheduled } = await setUp(t)
      const t0 = Date.now()
      const [a, b, s, c] = await store.enqueue({
        now: t0,
        jobs: [newJob(), newJob(), newJob({ delayMs: 1000 }), newJob()],
      })
      await evict(a!.id, s!.id)
      const claimed = await store.claim({ queues: ['default'], limit: 2, now: t0 + 2000, ...LEASE })
      assert.deepEqual(
        claimed.map((job) => job.id),
        [b!.id, c!.id],
      )
      assert.equal(await redis.zcard(`${ready}default`), 0)
      assert.equal(await redis.zcard(`${scheduled}default`), 0)
      for (const id of [a!.id, s!.id]) {
        assert.equal(await exists(id), false, `job ${id} was not recreated`)
        assert.equal(await inJobsIndex(id), false)
      }
    })

    it('settle, renew and recoverExpired report an active job whose hash is gone as lost, and recreate nothing', async (t) => {
      const { store, redis, evict, exists, inJobsIndex, activeSet } = await setUp(t)
      const t0 = Date.now()
      await store.enqueue({ now: t0, jobs: [newJob(), newJob(), newJob()] })
      const [x, y, z] = await store.claim({ queues: ['default'], limit: 3, now: t0, ...LEASE })
      await evict(x!.id, y!.id, z!.id)
      assert.deepEqual(await store.renew({ now: t0, leases: [x!], leaseMs: 30_000 }), ['lease_lost'])
      assert.deepEqual(
        (
          await store.settle({
            now: t0,
            settlements: [{ kind: 'completed', id: y!.id, leaseToken: y!.leaseToken }],
          })
        ).settled,
        ['lease_lost'],
      )
      assert.deepEqual(await store.recoverExpired({ now: t0 + 60_000 }), {
        retried: [],
        dead: [],
        clamped: 0,
        expired: [],
      })
      assert.equal(await redis.zcard(activeSet!), 0)
      for (const job of [x!, y!, z!]) {
        assert.equal(await exists(job.id), false)
        assert.equal(await inJobsIndex(job.id), false)
      }
    })

    it('a job hash left without its queue by an older Ferry is no job: settled as lost and deleted', async (t) => {
      const { store, redis, exists } = await setUp(t)
      const { id } = (await store.enqueue({ jobs: [newJob()] }))[0]!
      const [job] = await store.claim({ queues: ['default'], limit: 1, ...LEASE })
      // What claim.lua used to write over an evicted job: the lease's fields, no queue.
      await redis.hdel(store.keys.job(id), 'q', 'n', 'p', 'pr', 'ra', 'ma', 'c')
      assert.deepEqual(
        (await store.settle({ settlements: [{ kind: 'completed', id, leaseToken: job!.leaseToken }] }))
          .settled,
        ['lease_lost'],
      )
      assert.equal(await exists(id), false)
    })

    it('cancel, retry and purge pass over finished jobs whose hash is gone, and count only real ones', async (t) => {
      const { store, redis, evict, exists, completed, dead } = await setUp(t)
      const t0 = Date.now()
      await store.enqueue({ now: t0, jobs: [newJob(), newJob(), newJob(), newJob(), newJob()] })
      const [c1, c2, d1, d2] = await store.claim({ queues: ['default'], limit: 4, now: t0, ...LEASE })
      const error = { kind: 'error' as const, message: 'x' }
      await store.settle({
        now: t0,
        settlements: [
          { kind: 'completed', id: c1!.id, leaseToken: c1!.leaseToken },
          { kind: 'completed', id: c2!.id, leaseToken: c2!.leaseToken },
          { kind: 'dead', id: d1!.id, leaseToken: d1!.leaseToken, error },
          { kind: 'dead', id: d2!.id, leaseToken: d2!.leaseToken, error },
        ],
      })
      const [waiting] = (await store.listJobs({ state: 'ready' })).jobs
      await evict(c1!.id, d1!.id, waiting!.id)
      assert.equal(await store.cancel({ ids: [waiting!.id] }), 0)
      assert.equal(await store.retry({ allDead: true }), 1)
      assert.equal(await redis.zcard(`${dead}default`), 0)
      assert.equal(await store.purge({ state: 'completed', now: t0 + 1 }), 1)
      assert.equal(await redis.zcard(`${completed}default`), 0)
      assert.equal((await getJob(store, d2!.id))?.state, 'ready')
      for (const id of [c1!.id, d1!.id, waiting!.id]) assert.equal(await exists(id), false)
    })

    it('a unique key whose job is gone is free again, and a lost id counter never hands out a stored id', async (t) => {
      const { store, redis, evict } = await setUp(t)
      const [held] = await store.enqueue({ jobs: [newJob({ uniqueKey: 'k' })] })
      const [kept] = await store.enqueue({ jobs: [newJob()] })
      await evict(held!.id)
      const [again] = await store.enqueue({ jobs: [newJob({ uniqueKey: 'k' })] })
      assert.equal(again!.created, true)
      assert.equal((await getJob(store, again!.id))?.uniqueKey, 'k')

      await redis.del(store.keys.scriptKeys[0]!) // the id counter
      const [next] = await store.enqueue({ jobs: [newJob()] })
      assert.ok(BigInt(next!.id) > BigInt(again!.id), `id ${next!.id} follows the stored ones`)
      assert.equal((await getJob(store, kept!.id))?.name, 'test-job', 'the stored job is untouched')
    })

    it('listJobs and stats leave out jobs whose hash is gone, and listJobs drops their entries', async (t) => {
      const { store, evict, inJobsIndex } = await setUp(t)
      const [a, b] = await store.enqueue({ jobs: [newJob(), newJob()] })
      await evict(a!.id)
      assert.deepEqual(
        (await store.listJobs()).jobs.map((job) => job.id),
        [b!.id],
      )
      assert.equal(await inJobsIndex(a!.id), false)
      assert.equal((await store.stats())[0]?.queue, 'default')
    })

    it('with allowEviction, an evicted instance marker is put back while the namespace has other keys', async (t) => {
      const { store: first } = await setUp(t)
      const redis = admin(t, TEST_REDIS_URL)
      const store = await RedisStore.open({
        url: TEST_REDIS_URL,
        namespace: first.keys.namespace,
        allowEviction: true,
        onWarning: () => {},
      })
      defer(t, () => store.close())
      const marker = await redis.get(store.keys.instance)
      await redis.del(store.keys.instance)
      await store.enqueue({ jobs: [newJob()] })
      assert.equal(await redis.get(store.keys.instance), marker)
    })
  })
})
