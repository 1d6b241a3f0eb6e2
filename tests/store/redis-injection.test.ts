/**
 * Nothing a caller passes can break a Redis script or reach a key it should not: names are checked
 * before they become part of a key, ids that are not ids never reach a script, and payloads,
 * unique keys, worker ids and lease tokens are only ever values.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Redis } from 'ioredis'

import { FerryError, ValidationError } from '../../src/core/errors.js'
import type { NewJob } from '../../src/core/job.js'
import { newJob } from '../support/store-harness.js'
import { redisUnreachableReason, tempNamespace, TEST_REDIS_URL } from '../support/redis-harness.js'
import { whenAvailable } from '../support/services.js'
import { getJob, waitReason } from '../support/store-calls.js'

const LEASE = { leaseMs: 60_000, workerId: 'w' }

await whenAvailable(redisUnreachableReason(), () => {
  describe('RedisStore input safety', () => {
    it('keeps queues apart whose names look like keys or key prefixes', async (t) => {
      const { store } = await tempNamespace(t, 'injection')
      const queues = ['x', 'ready:x', 'job:1', 'x:y', ':', '..', '-', 'scheduled:ready:x', 'queues', 'id']
      const results = await store.enqueue({
        jobs: queues.map((queue) => newJob({ queue, payload: JSON.stringify(queue) })),
      })
      for (const [i, queue] of queues.entries()) {
        const claimed = await store.claim({ queues: [queue], limit: 10, ...LEASE })
        assert.deepEqual(
          claimed.map((job) => [job.id, job.payload]),
          [[results[i]!.id, queue]],
          `queue ${queue} holds its own job only`,
        )
      }
      assert.deepEqual(
        (await store.stats()).map((s) => [s.queue, s.active]),
        [...queues].sort().map((q) => [q, 1]),
      )
    })

    it('rejects queue and job names outside the allowed alphabet, writing nothing', async (t) => {
      const { store } = await tempNamespace(t, 'injection')
      const bad = ['a b', '{x}', 'x}', 'a,b', 'a\nb', '', 'q'.repeat(129), 'ü', "x'", 'x"..']
      for (const name of bad) {
        for (const job of [newJob({ queue: name }), newJob({ name })]) {
          await assert.rejects(
            store.enqueue({ jobs: [newJob(), job] }),
            (error: unknown) => error instanceof ValidationError,
            `enqueue refuses ${JSON.stringify(name)}`,
          )
        }
        await assert.rejects(
          store.claim({ queues: [name], limit: 1, ...LEASE }),
          (error: unknown) => error instanceof ValidationError,
        )
        await assert.rejects(
          waitReason(store, { queues: [name], timeoutMs: 10 }),
          (error: unknown) => error instanceof ValidationError,
        )
      }
      assert.deepEqual(await store.listJobs(), { jobs: [], nextCursor: null })
    })

    it('stores payloads, unique keys and worker ids as they are, whatever they contain', async (t) => {
      const { store } = await tempNamespace(t, 'injection')
      const nasty = [
        "]] .. redis.call('FLUSHALL') .. [[",
        '%d %s %% \\ \' " ` $ {} [] ,,, ;',
        '\u0000 \u0001 \u001f \u007f',
        '\r\n*3\r\n$8\r\nFLUSHALL\r\n',
        '🚀 ünïcødé \u2028 \ud83d\ude00',
        'x'.repeat(100_000),
      ]
      const jobs: NewJob[] = nasty.map((text, i) =>
        newJob({ payload: JSON.stringify({ text, i }), uniqueKey: `${text},${i},${text}` }),
      )
      const first = await store.enqueue({ jobs })
      assert.ok(first.every((r) => r.created))
      const again = await store.enqueue({ jobs })
      assert.deepEqual(
        again,
        first.map((r) => ({ id: r.id, created: false })),
        'the same unique keys find the same jobs',
      )
      const workerId = "w'] .. {x} ,\u0000\n"
      const claimed = await store.claim({ queues: ['default'], limit: 100, leaseMs: 60_000, workerId })
      assert.equal(claimed.length, nasty.length)
      for (const job of claimed) {
        const { text, i } = job.payload as { text: string; i: number }
        assert.equal(text, nasty[i])
        assert.equal(job.uniqueKey, `${text},${i},${text}`)
        assert.equal(job.workerId, workerId)
        const stored = await getJob(store, job.id)
        assert.deepEqual(stored?.payload, job.payload)
      }
      const results = (
        await store.settle({
          settlements: claimed.map((job) => ({
            kind: 'completed' as const,
            id: job.id,
            leaseToken: job.leaseToken,
            result: { echo: (job.payload as { text: string }).text },
          })),
        })
      ).settled
      assert.ok(results.every((r) => r === 'ok'))
      for (const job of claimed) {
        assert.deepEqual((await getJob(store, job.id))?.result, {
          echo: (job.payload as { text: string }).text,
        })
      }
    })

    it('treats ids and lease tokens that are not its own as unknown', async (t) => {
      const { store } = await tempNamespace(t, 'injection')
      const [{ id } = { id: '' }] = await store.enqueue({ jobs: [newJob()] })
      const [job] = await store.claim({ queues: ['default'], limit: 1, ...LEASE })
      assert.equal(job?.id, id)
      const notIds = [
        '1 OR 1',
        `../${id}`,
        `${id}}`,
        `{${id}}`,
        '-1',
        `0${id}`,
        '1e3',
        ` ${id}`,
        `${id}\n`,
        '',
      ]
      for (const bad of notIds) {
        assert.equal(await getJob(store, bad), null, `getJob(${JSON.stringify(bad)})`)
        assert.deepEqual(
          (await store.settle({ settlements: [{ kind: 'completed', id: bad, leaseToken: job!.leaseToken }] }))
            .settled,
          ['lease_lost'],
        )
        assert.deepEqual(
          await store.renew({ leases: [{ id: bad, leaseToken: job!.leaseToken }], leaseMs: 1000 }),
          ['lease_lost'],
        )
        assert.equal(await store.cancel({ ids: [bad] }), 0)
        assert.equal(await store.retry({ ids: [bad] }), 0)
        await assert.rejects(store.listJobs({ cursor: bad }), (error: unknown) => error instanceof FerryError)
      }
      for (const token of ['', `${job!.leaseToken} `, `${job!.leaseToken}\u0000`, "' or '1'='1"]) {
        assert.deepEqual(
          (await store.settle({ settlements: [{ kind: 'completed', id, leaseToken: token }] })).settled,
          ['lease_lost'],
        )
      }
      assert.equal((await getJob(store, id))?.state, 'active')
    })

    it('writes only keys of its own namespace, of the documented shapes', async (t) => {
      const { store, namespace } = await tempNamespace(t, 'injection')
      const jobs = ['a', 'b:c', 'ready:a'].flatMap((queue) => [
        newJob({ queue }),
        newJob({ queue, delayMs: 60_000 }),
        newJob({ queue, uniqueKey: `{${queue}},*` }),
      ])
      await store.enqueue({ jobs })
      const [active, dead] = await store.claim({ queues: ['a', 'b:c'], limit: 2, ...LEASE })
      await store.settle({
        settlements: [
          {
            kind: 'dead',
            id: dead!.id,
            leaseToken: dead!.leaseToken,
            error: { kind: 'error', message: 'x' },
          },
        ],
      })
      assert.ok(active)
      await store.control({ requestStop: true })
      const redis = new Redis(TEST_REDIS_URL)
      try {
        const keys: string[] = []
        let cursor = '0'
        do {
          const [next, found] = await redis.scan(cursor, 'MATCH', `*${namespace}*`, 'COUNT', 1000)
          cursor = next
          keys.push(...found)
        } while (cursor !== '0')
        const root = `ferry:{${namespace}}:`
        const shape =
          /^(id|jobs|active|queues|unique|stop|schema|instance|has-ready|has-scheduled|waiters|job:[1-9]\d*|(ready|scheduled|completed|dead):[A-Za-z0-9._:-]{1,128}|ready:[A-Za-z0-9._:-]{1,128} [A-Za-z0-9._:-]{1,128})$/
        const odd = keys.filter((key) => !key.startsWith(root) || !shape.test(key.slice(root.length)))
        assert.deepEqual(odd, [], 'keys of an unexpected shape')
        assert.ok(keys.length >= 9 + 6, `found ${keys.length} keys`)
      } finally {
        redis.disconnect()
      }
    })
  })
})
