/**
 * Queue rates, group limits and the rotation between groups on PostgreSQL, beyond the shared
 * conformance cases: exact counts when claims of many sessions race, claims that lock queue and
 * cursor rows in different orders without deadlocking, waiting workers that a group at its limit
 * does not wake again and again, and the statements reaching every table by index.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'

import type { ClaimedJob } from '../../src/core/job.js'
import type { PostgresStore } from '../../src/postgres.js'
import { completed, enqueueJobs, LEASE_MS, MINUTE } from '../conformance/store/kit.js'
import { within } from '../support/async.js'
import { defer } from '../support/cleanup.js'
import {
  adminQuery,
  POSTGRES_URL,
  postgresUnreachableReason,
  tempSchema,
} from '../support/postgres-harness.js'
import { skipUnlessAvailable } from '../support/services.js'
import { waitReason } from '../support/store-calls.js'

/** Claims of `limit` at `now`, `count` of them at once, spread over the stores. */
async function racingClaims(
  stores: readonly PostgresStore[],
  queues: string[],
  count: number,
  limit: number,
  now: number,
): Promise<ClaimedJob[]> {
  const claims = Array.from({ length: count }, (_, i) =>
    stores[i % stores.length]!.claim({ queues, limit, leaseMs: LEASE_MS, workerId: `w${i}`, now }),
  )
  return (await Promise.all(claims)).flat()
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>()
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1)
  return counts
}

test('PostgreSQL queue limits', skipUnlessAvailable(await postgresUnreachableReason()), async (t) => {
  await t.test(
    'claims racing in many sessions start no more than the rates and group limits allow',
    async (t) => {
      const { open } = tempSchema(t)
      const stores = [await open(), await open(), await open(), await open()]
      const now = Date.now()
      await enqueueJobs(
        stores[0]!,
        now,
        Array.from({ length: 30 }, () => ({ queue: 'rated' })),
      )
      await enqueueJobs(
        stores[0]!,
        now,
        Array.from({ length: 40 }, (_, i) => ({ queue: 'grouped', group: `g${i % 4}` })),
      )
      await stores[0]!.control({ limit: { queue: 'rated', rate: { limit: 7, perMs: MINUTE } } })
      await stores[0]!.control({
        limit: { queue: 'grouped', groupConcurrency: 3, groupRate: { limit: 2, perMs: MINUTE } },
      })
      const rated = await racingClaims(stores, ['rated'], 24, 2, now)
      assert.equal(rated.length, 7, 'the rate, exactly')
      const grouped = await racingClaims(stores, ['grouped'], 24, 2, now)
      assert.deepEqual(
        [...countBy(grouped, (job) => job.group ?? '-')].sort(),
        [
          ['g0', 2],
          ['g1', 2],
          ['g2', 2],
          ['g3', 2],
        ],
        'each group its rate (2), below its concurrency (3)',
      )
      // Settled, the jobs leave room under the concurrency but give back no start.
      for (const job of grouped) await stores[0]!.settle({ settlements: [completed(job)], now })
      assert.deepEqual(await racingClaims(stores, ['grouped'], 8, 2, now + 1000), [])
      assert.equal((await racingClaims(stores, ['grouped'], 8, 2, now + MINUTE)).length, 8)
    },
  )

  await t.test('claims of grouped queues listed in different orders do not deadlock', async (t) => {
    const { open } = tempSchema(t)
    const stores = [await open(), await open(), await open()]
    const now = Date.now()
    for (const queue of ['x', 'y', 'z']) {
      await enqueueJobs(
        stores[0]!,
        now,
        Array.from({ length: 60 }, (_, i) => ({ queue, group: `g${i % 6}` })),
      )
    }
    // One of them limited too, so that queue rows and cursor rows are both locked.
    await stores[0]!.control({ limit: { queue: 'y', groupConcurrency: 100 } })
    const orders = [
      ['x', 'y', 'z'],
      ['z', 'y', 'x'],
      ['y', 'x', 'z'],
    ]
    const claims = Array.from({ length: 45 }, (_, i) =>
      stores[i % 3]!.claim({ queues: orders[i % 3]!, limit: 4, leaseMs: LEASE_MS, workerId: `w${i}`, now }),
    )
    const claimed = (await Promise.all(claims)).flat()
    assert.equal(claimed.length, 180, 'every job, each claim 4')
    assert.equal(new Set(claimed.map((job) => job.id)).size, 180, 'none twice')
  })

  await t.test(
    'a worker waiting while every ready job is in a group at its limit sleeps until one finishes',
    async (t) => {
      const { open } = tempSchema(t)
      const worker = await open()
      const peer = await open()
      await enqueueJobs(worker, Date.now(), [{ group: 'a' }, { group: 'a' }])
      await worker.control({ limit: { queue: 'default', groupConcurrency: 1 } })
      const claim = { queues: ['default'], limit: 5, leaseMs: LEASE_MS, workerId: 'w' }
      const [running] = await worker.claim(claim)
      assert.deepEqual(await worker.claim(claim), [])
      // Not woken at once by the ready job it could not claim (which would make its loop spin).
      assert.equal(await waitReason(worker, { queues: ['default'], timeoutMs: 500 }), 'timeout')
      const waiting = waitReason(worker, { queues: ['default'], timeoutMs: 5000 })
      await new Promise((resolve) => setTimeout(resolve, 100))
      await peer.settle({ settlements: [completed(running)] })
      assert.equal(await within(3000, 'waitForWork', waiting), 'notified')
      assert.equal((await worker.claim(claim)).length, 1)
    },
  )

  await t.test(
    "a worker waiting on a group held by its rate wakes when the group's window opens",
    async (t) => {
      const { open } = tempSchema(t)
      const store = await open()
      await enqueueJobs(store, Date.now(), [{ group: 'a' }, { group: 'a' }])
      await store.control({ limit: { queue: 'default', groupRate: { limit: 1, perMs: 400 } } })
      const claim = { queues: ['default'], limit: 5, leaseMs: LEASE_MS, workerId: 'w' }
      assert.equal((await store.claim(claim)).length, 1)
      assert.deepEqual(await store.claim(claim), [])
      const woken = await within(
        3000,
        'waitForWork',
        waitReason(store, { queues: ['default'], timeoutMs: 5000 }),
      )
      assert.equal(woken, 'due')
      assert.equal((await store.claim(claim)).length, 1)
    },
  )

  await t.test('a queue left without a rate and a group rate forgets its start log', async (t) => {
    const { open, schema } = tempSchema(t)
    const store = await open()
    const now = Date.now()
    await enqueueJobs(store, now, [{}, {}, { group: 'a' }])
    await store.control({
      limit: { queue: 'default', rate: { limit: 5, perMs: MINUTE }, groupRate: { limit: 5, perMs: MINUTE } },
    })
    await store.claim({ queues: ['default'], limit: 5, leaseMs: LEASE_MS, workerId: 'w', now })
    const starts = () => adminQuery<{ n: number }>(`SELECT count(*)::integer AS n FROM "${schema}".starts`)
    assert.deepEqual(await starts(), [{ n: 3 }])
    await store.control({ limit: { queue: 'default', rate: null } })
    assert.deepEqual(await starts(), [{ n: 3 }], 'the group rate still reads it')
    await store.control({ limit: { queue: 'default', groupRate: null } })
    assert.deepEqual(await starts(), [{ n: 0 }])
  })

  await t.test(
    'a claim of a limited, grouped queue and a look for work reach every table by index',
    async (t) => {
      const { open, schema } = tempSchema(t)
      const store = await open()
      const app = new pg.Client({ connectionString: POSTGRES_URL })
      await app.connect()
      defer(t, () => app.end())
      const now = Date.now()
      await store.control({
        limit: {
          queue: 'default',
          rate: { limit: 1000, perMs: MINUTE },
          groupConcurrency: 2,
          groupRate: { limit: 1, perMs: MINUTE },
        },
      })
      await adminQuery(
        `INSERT INTO "${schema}".jobs (queue, name, payload, state, priority, run_at, max_attempts, created_at,
                                      updated_at, group_key)
       SELECT 'default', 'n', '{}', 'ready', 0, g, 25, g, g, CASE WHEN g % 10 > 0 THEN 'g' || (g % 500) END
       FROM generate_series(1, 20000) AS g;
       ANALYZE "${schema}".jobs`,
      )
      const plans: string[] = []
      app.on('notice', (notice) => plans.push(notice.message ?? ''))
      await app.query(
        "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; " +
          'SET auto_explain.log_level = notice; SET client_min_messages = notice',
      )
      for (const names of [null, ['n']]) {
        const claimed = await app.query(
          `SELECT * FROM "${schema}".claim($1, 8, 60000, 'w', $2, 'tok', false, $3)`,
          [['default'], now, names],
        )
        assert.equal(claimed.rowCount, 8)
        await app.query(
          `SELECT * FROM "${schema}".wait_for_work($1, NULL, NULL, NULL, NULL, NULL, NULL, $2)`,
          [['default'], names],
        )
      }
      assert.ok(
        plans.some((plan) => /jobs_grouped/.test(plan)),
        'the grouped jobs were read',
      )
      const scans = plans.filter((plan) => /Seq Scan on (jobs|starts|group_turns|queues)\b/.test(plan))
      assert.deepEqual(scans, [], 'no statement scans a table')
    },
  )
})
