/**
 * What only the PostgreSQL store does, beyond the shared conformance suite: enqueue inside the
 * caller's own transaction, enqueue from SQL, input that cannot reach the SQL text, migrations
 * that concurrent starts share, a waiting worker that survives losing its connections, and
 * delivery's own cases: rows too large for a notification, enqueues that must not deliver, a
 * waiter whose listening connection is gone, and jobs delivered to a wait that had just ended.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'

import { createClient, FerryError, ValidationError, type Store } from '../../src/index.js'
import { PostgresStore } from '../../src/postgres.js'
import { migrations, sql } from '../../src/store/postgres/generated/assets.js'
import {
  enqueueArrays,
  plainArrays,
  uniqueModeArrays,
} from '../../src/store/postgres/postgres-enqueue-arrays.js'
import { PostgresSchema } from '../../src/store/postgres/postgres-migrations.js'
import { DELIVERY_LEASE_MS, type EnqueueResult } from '../../src/store/store.js'
import type { NewJob } from '../../src/core/job.js'
import { deadlineOf, EXPIRED_ERROR } from '../../src/store/kernel/jobs.js'
import { metaOf } from '../../src/store/kernel/job-meta.js'
import { tempDatabase } from '../support/sqlite-harness.js'
import {
  adminQuery,
  dropSchema,
  POSTGRES_URL,
  postgresUnreachableReason,
  tempSchema,
  testSchemaName,
} from '../support/postgres-harness.js'
import { skipUnlessAvailable, whenAvailable } from '../support/services.js'
import { privatePostgres, privatePostgresUnavailable } from '../support/private-postgres.js'
import { allJobs, newJob } from '../support/store-harness.js'
import { waitFor, within } from '../support/async.js'
import { defer } from '../support/cleanup.js'
import { startWorker } from '../support/workers.js'
import { getJob, waitReason } from '../support/store-calls.js'

const LEASE_MS = 60_000

/** A connection of the test's own, as an application holds one for its transactions. */
async function appClient(t: Parameters<typeof defer>[0]): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  defer(t, () => client.end())
  return client
}

/** The columns of the jobs of these results, in id order. */
function jobRows(schema: string, columns: string, results: readonly { id: string }[]) {
  return adminQuery(`SELECT ${columns} FROM "${schema}".jobs WHERE id = ANY($1::bigint[]) ORDER BY id`, [
    results.map((result) => result.id),
  ])
}

/**
 * The same jobs enqueued by the store on its own connections, then inside a caller's transaction
 * (`tx`), which takes the plain arrays: what each way stored must be the same.
 */
async function enqueueBothWays(
  store: Store,
  app: pg.Client,
  jobs: NewJob[],
  now: number,
): Promise<{ own: EnqueueResult[]; inTransaction: EnqueueResult[] }> {
  const own = await store.enqueue({ jobs, now })
  await app.query('BEGIN')
  const inTransaction = await store.enqueue({ jobs, tx: app, now })
  await app.query('COMMIT')
  return { own, inTransaction }
}

/** A job's expires_at as the jobs table returns it (bigint as text), or null without a deadline. */
function storedDeadline(job: NewJob, now: number): string | null {
  const deadline = deadlineOf(job, now)
  return deadline === null ? null : String(deadline)
}

/** A waiters row (migrations/0003_delivery.sql), bigints as text. */
interface WaiterRow {
  id: string
  queues: string[]
  lim: number
  lease_ms: string
  worker_id: string
  channel: string
  lock_key: string
  registered_at: string
}

/** The waiters row of a worker's wait, once its store has registered it. */
async function registeredWaiter(schema: string, workerId: string): Promise<WaiterRow> {
  const rows = await waitFor(
    async () => {
      const found = await adminQuery<WaiterRow>(
        `SELECT id, queues, lim, lease_ms::text, worker_id, channel, lock_key::text, registered_at::text
         FROM "${schema}".waiters WHERE worker_id = $1`,
        [workerId],
      )
      return found.length > 0 ? found : null
    },
    5000,
    `a waiter of ${workerId}`,
  )
  return rows[0]!
}

/** Puts a waiters row (back) in place, as an enqueue that read the table a moment earlier saw it. */
async function putWaiter(client: pg.Client, schema: string, row: WaiterRow): Promise<void> {
  await client.query(
    `INSERT INTO "${schema}".waiters (id, queues, lim, lease_ms, worker_id, channel, lock_key, registered_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
    [row.id, row.queues, row.lim, row.lease_ms, row.worker_id, row.channel, row.lock_key, row.registered_at],
  )
}

/** A worker's loop until it claims something: wait, claim; an empty claim means wait again. */
async function claimWithin(store: Store, ms: number): Promise<string[]> {
  const deadline = Date.now() + ms
  for (;;) {
    const claimed = await store.claim({ queues: ['default'], limit: 10, leaseMs: LEASE_MS, workerId: 'w' })
    if (claimed.length > 0) return claimed.map((job) => job.id)
    const left = deadline - Date.now()
    if (left <= 0) return []
    await waitReason(store, { queues: ['default'], timeoutMs: left })
  }
}

await whenAvailable(postgresUnreachableReason(), () => {
  test('an enqueue with { tx } writes nothing when the transaction rolls back', async (t) => {
    const { open } = tempSchema(t)
    const store = await open()
    const client = createClient({ store })
    const app = await appClient(t)
    await app.query('BEGIN')
    const { id } = await client.enqueue('send-email', { to: 'a@example.com' }, { tx: app })
    await app.query('ROLLBACK')
    assert.equal(await getJob(store, id), null)
    assert.deepEqual(await allJobs(store), [])
  })

  test('an enqueue with { tx } is invisible until commit, then visible and wakes a waiting worker', async (t) => {
    const { open } = tempSchema(t)
    const store = await open()
    const worker = await open()
    const app = await appClient(t)
    const waiting = waitReason(worker, { queues: ['default'], timeoutMs: 10_000 })
    // Let the waiter start listening, so a notification sent too early would be seen.
    await new Promise((resolve) => setTimeout(resolve, 200))

    await app.query('BEGIN')
    await app.query('CREATE TEMP TABLE orders (id int)')
    const [first, second] = await createClient({ store }).enqueueMany(
      [
        { name: 'ship', payload: { order: 1 } },
        { name: 'ship', payload: { order: 2 } },
      ],
      { tx: app },
    )
    assert.equal(await getJob(store, first!.id), null, 'not visible to others before commit')
    const early = await Promise.race([waiting, new Promise((resolve) => setTimeout(resolve, 300, 'still'))])
    assert.equal(early, 'still', 'no worker is woken before commit')
    await app.query('COMMIT')

    assert.equal(await within(5000, 'waitForWork', waiting), 'notified')
    assert.equal((await getJob(store, first!.id))?.state, 'ready')
    assert.deepEqual(await claimWithin(worker, 1000), [first!.id, second!.id])
  })

  for (const outcome of ['COMMIT', 'ROLLBACK'] as const) {
    test(`an enqueue of a unique key held by an open transaction waits for it (${outcome}), then resolves each job`, async (t) => {
      const { open } = tempSchema(t)
      const store = await open()
      const client = createClient({ store })
      const app = await appClient(t)
      await app.query('BEGIN')
      const held = await client.enqueue('ship', { by: 'tx' }, { uniqueKey: 'order-7', tx: app })
      // Group commit puts both in one store call: the keyless job must not fail with the keyed one.
      const keyed = client.enqueue('ship', { by: 'pool' }, { uniqueKey: 'order-7' })
      const keyless = client.enqueue('ship', { by: 'pool, no key' })
      const early = await Promise.race([keyed, new Promise((resolve) => setTimeout(resolve, 300, 'waiting'))])
      assert.equal(early, 'waiting', 'the enqueue waits for the transaction holding the key')
      await app.query(outcome)
      const [keyedResult, keylessResult] = await within(
        5000,
        'the waiting enqueue',
        Promise.all([keyed, keyless]),
      )
      if (outcome === 'COMMIT') {
        assert.deepEqual(keyedResult, { id: held.id, created: false })
      } else {
        assert.equal(keyedResult.created, true)
        assert.deepEqual((await getJob(store, keyedResult.id))?.payload, { by: 'pool' })
      }
      assert.equal(keylessResult.created, true)
      assert.equal((await allJobs(store)).length, 2, 'one job per key, and the keyless one')
    })
  }

  test('a store without transactions refuses { tx } with a ValidationError, writing nothing', async (t) => {
    const store = await tempDatabase(t).open()
    await assert.rejects(
      createClient({ store }).enqueue('x', {}, { tx: {} }),
      (error: unknown) => error instanceof ValidationError && error.field === 'tx',
    )
    assert.deepEqual(await allJobs(store), [])
  })

  test('an enqueue with { tx } refuses something that is not a client', async (t) => {
    const store = await tempSchema(t).open()
    await assert.rejects(
      createClient({ store }).enqueue('x', {}, { tx: { notAClient: true } }),
      (error: unknown) => error instanceof ValidationError && error.field === 'tx',
    )
  })

  test('ferry.enqueue() in SQL enqueues a job that workers claim, and refuses bad input', async (t) => {
    const { open, schema } = tempSchema(t)
    const store = await open()
    const app = await appClient(t)
    const waiting = waitReason(store, { queues: ['mail'], timeoutMs: 10_000 })
    await new Promise((resolve) => setTimeout(resolve, 200))
    const { rows } = await app.query<{ id: string }>(
      `SELECT "${schema}".enqueue('send-email', $1::json, queue => 'mail', priority => 5) AS id`,
      [JSON.stringify({ to: 'a@example.com', n: [1, 2] })],
    )
    assert.equal(await within(5000, 'waitForWork', waiting), 'notified')
    const job = await getJob(store, rows[0]!.id)
    assert.deepEqual(
      {
        name: job?.name,
        queue: job?.queue,
        payload: job?.payload,
        priority: job?.priority,
        state: job?.state,
      },
      {
        name: 'send-email',
        queue: 'mail',
        payload: { to: 'a@example.com', n: [1, 2] },
        priority: 5,
        state: 'ready',
      },
    )

    const later = await app.query<{ id: string }>(
      `SELECT "${schema}".enqueue('report', '{}', run_at => now() + interval '1 hour', unique_key => 'r1') AS id`,
    )
    const again = await app.query<{ id: string }>(
      `SELECT "${schema}".enqueue('report', '{}', unique_key => 'r1') AS id`,
    )
    assert.equal(again.rows[0]!.id, later.rows[0]!.id, 'a held unique key returns the holder')
    const scheduled = await getJob(store, later.rows[0]!.id)
    assert.equal(scheduled?.state, 'scheduled')
    assert.ok(Math.abs(scheduled!.runAt - (Date.now() + 3_600_000)) < 60_000)

    const grouped = await app.query<{ id: string; deadline: string }>(
      `SELECT "${schema}".enqueue('sync', '{}', group_key => 'tenant ✓', expires_at => now() + interval '5 minutes') AS id,
              floor(extract(epoch FROM now() + interval '5 minutes') * 1000)::text AS deadline`,
    )
    const withGroup = await getJob(store, grouped.rows[0]!.id)
    assert.deepEqual(
      [withGroup?.group, withGroup?.expiresAt],
      ['tenant ✓', Number(grouped.rows[0]!.deadline)],
    )

    for (const bad of [
      `SELECT "${schema}".enqueue('bad name', '{}')`,
      `SELECT "${schema}".enqueue('ok', '{}', queue => 'a,b')`,
      `SELECT "${schema}".enqueue('ok', '{}', max_attempts => 0)`,
      `SELECT "${schema}".enqueue('ok', NULL)`,
      `SELECT "${schema}".enqueue('ok', '{}', group_key => '')`,
      `SELECT "${schema}".enqueue('ok', '{}', expires_at => now() - interval '1 second')`,
      `SELECT "${schema}".enqueue('ok', '{}', run_at => now() + interval '1 hour', expires_at => now() + interval '1 minute')`,
    ]) {
      await assert.rejects(
        app.query(bad),
        (error: unknown) => (error as { code?: string }).code === '22023',
        bad,
      )
    }
    assert.equal((await allJobs(store)).length, 3)
  })

  test('queue names, payloads, keys and ids cannot inject SQL: refused or stored as given', async (t) => {
    const store = await tempSchema(t).open()
    const client = createClient({ store })
    const hostile = `'); DROP TABLE jobs; --`
    const { id } = await client.enqueue(
      'x',
      { text: hostile, quote: '\'"\\', nul: '\u0000' },
      { uniqueKey: hostile },
    )
    const job = await getJob(store, id)
    assert.deepEqual(job?.payload, { text: hostile, quote: '\'"\\', nul: '\u0000' })
    assert.equal(job?.uniqueKey, hostile)

    const refused = async (call: () => Promise<unknown>, field: string): Promise<void> => {
      await assert.rejects(
        call,
        (error: unknown) => error instanceof ValidationError && error.field === field,
      )
    }
    await refused(() => client.enqueue('x', {}, { queue: hostile }), 'queue')
    await refused(() => client.enqueue(hostile, {}), 'name')
    await refused(() => store.listJobs({ queue: hostile }), 'queue')
    await refused(
      () => store.claim({ queues: [hostile], limit: 1, leaseMs: LEASE_MS, workerId: 'w' }),
      'queues[0]',
    )
    await refused(() => waitReason(store, { queues: [hostile], timeoutMs: 10 }), 'queues[0]')
    await refused(() => store.listJobs({ cursor: `1 OR 1=1` }), 'cursor')
    // Ids that are not ids match nothing.
    assert.equal(await getJob(store, `${id} OR 1=1`), null)
    assert.equal(await store.cancel({ ids: [`${id}; DELETE FROM jobs`] }), 0)
    const [claimed] = await store.claim({
      queues: ['default'],
      limit: 1,
      leaseMs: LEASE_MS,
      workerId: hostile,
    })
    assert.equal(claimed?.workerId, hostile)
    assert.deepEqual(
      (await store.settle({ settlements: [{ kind: 'completed', id: claimed!.id, leaseToken: hostile }] }))
        .settled,
      ['lease_lost'],
    )
    assert.equal((await allJobs(store)).length, 1)
  })

  test('refuses a schema name that is not a plain lower-case identifier, before connecting', async () => {
    for (const schema of [
      'Ferry',
      'ferry"; DROP SCHEMA public; --',
      '1ferry',
      'pg_ferry',
      '',
      'a'.repeat(49),
    ]) {
      await assert.rejects(
        PostgresStore.open({ connectionString: POSTGRES_URL, schema }),
        (error: unknown) => error instanceof ValidationError && error.field === 'schema',
        schema,
      )
    }
  })

  test('stores opening a new schema at once migrate it once, and all of them work', async (t) => {
    const schema = testSchemaName()
    defer(t, () => dropSchema(schema))
    const opening = Array.from({ length: 5 }, () =>
      PostgresStore.open({ connectionString: POSTGRES_URL, schema }),
    )
    const stores = await Promise.all(opening)
    for (const store of stores) defer(t, () => store.close())
    const versions = await adminQuery<{ version: number }>(
      `SELECT version FROM "${schema}".migrations ORDER BY version`,
    )
    // Each migration applied once.
    assert.deepEqual(
      versions.map((v) => v.version),
      migrations.map((m) => m.version),
    )
    const [enqueued] = await stores[0]!.enqueue({ jobs: [newJob()] })
    assert.equal((await getJob(stores[4]!, enqueued!.id))?.state, 'ready')
  })

  test('a store opened with migrate: false refuses a schema that was never migrated', async (t) => {
    const schema = testSchemaName()
    defer(t, () => dropSchema(schema))
    await assert.rejects(
      PostgresStore.open({ connectionString: POSTGRES_URL, schema, migrate: false }),
      (error: unknown) => error instanceof FerryError && error.code === 'migration_required',
    )
  })

  test('a row locked by another session delays only its own job, and the worker says so', async (t) => {
    const { open, schema } = tempSchema(t)
    const store = await open()
    const app = await appClient(t)
    const runs = new Map<string, number>()
    let lockedId: string | null = null
    const handlers = {
      work: async (_payload: unknown, { job }: { job: { id: string } }) => {
        runs.set(job.id, (runs.get(job.id) ?? 0) + 1)
        if (lockedId === null) {
          // The first job to run: an operator's transaction locks its row while it runs.
          lockedId = job.id
          await app.query('BEGIN')
          await app.query(`SELECT id FROM "${schema}".jobs WHERE id = $1 FOR UPDATE`, [job.id])
        } else {
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        return { done: job.id }
      },
    }
    const client = createClient({ store })
    const ids = (
      await client.enqueueMany(Array.from({ length: 40 }, (_, i) => ({ name: 'work', payload: { i } })))
    ).map((result) => result.id)
    const { errors } = await startWorker(t, {
      store,
      handlers,
      concurrency: 4,
      leaseMs: 1500,
      recoverIntervalMs: 200,
    })
    const completed = (): Promise<string[]> =>
      allJobs(store).then((jobs) => jobs.filter((job) => job.state === 'completed').map((job) => job.id))
    // Every other job finishes, past several lease lengths, although one row stays locked.
    await waitFor(async () => (await completed()).length === 39, 30_000, 'the 39 unlocked jobs')
    await new Promise((resolve) => setTimeout(resolve, 2000))
    assert.ok(lockedId !== null)
    assert.equal((await getJob(store, lockedId))?.state, 'active', 'the locked job waits, still leased')
    assert.ok(
      errors.some((error) => error instanceof FerryError && error.code === 'job_locked'),
      'the stall is reported as a worker error',
    )
    await app.query('COMMIT')
    // Its lease ran out while the row stayed locked, so once the lock is gone either its outcome
    // is written or recovery puts it back and it runs again: it ends completed either way.
    await waitFor(
      async () => (await getJob(store, lockedId!))?.state === 'completed',
      15_000,
      'the locked job',
    )
    assert.deepEqual(
      ids.filter((id) => id !== lockedId && runs.get(id) !== 1),
      [],
      'every other job ran once',
    )
  })

  test('the hot statements reach the jobs table by index, also when their plans were made on a tiny table', async (t) => {
    const { open, schema } = tempSchema(t)
    const store = await open()
    const app = await appClient(t)
    // The plans of a fresh deployment: made (and kept, generic after five calls) while the table
    // holds a few rows, analysed, where a sequential scan is cheapest.
    const q = (text: string, values: unknown[] = []) =>
      app.query(text.replaceAll('S.', `"${schema}".`), values)
    await createClient({ store }).enqueueMany(
      Array.from({ length: 40 }, (_, i) => ({ name: 'tiny', payload: { i } })),
    )
    await q('ANALYZE S.jobs')
    const calls = async (): Promise<void> => {
      const [job] = (await q(`SELECT * FROM S.claim($1, 1, 60000, 'w', NULL, 'tiny')`, [['default']]))
        .rows as {
        id: string
        lease_token: string
      }[]
      await q('SELECT * FROM S.renew($1, $2, 60000, NULL)', [[job!.id], [job!.lease_token]])
      await q(
        `SELECT * FROM S.settle($1, $2, ARRAY['completed'], ARRAY[NULL::bigint], ARRAY[NULL], ARRAY[NULL], NULL)`,
        [[job!.id], [job!.lease_token]],
      )
      await q('SELECT * FROM S.recover_expired(NULL, 10, NULL, NULL, NULL)')
      await q(`SELECT * FROM S.wait_for_work($1, NULL, NULL, NULL, NULL, NULL, NULL)`, [['default']])
      await q(
        `SELECT * FROM S.enqueue_batch(ARRAY['default'], ARRAY['n'], ARRAY['{}'], ARRAY[0], ARRAY[NULL::bigint],
           ARRAY[0::bigint], ARRAY[25], ARRAY[NULL::integer], ARRAY['key-' || $1::text], NULL, 'tiny')`,
        [job!.id],
      )
    }
    for (let i = 0; i < 8; i++) await calls()
    // Then the table grows, with no ANALYZE to invalidate those plans.
    await q(
      `INSERT INTO S.jobs (queue, name, payload, state, priority, run_at, max_attempts, created_at, updated_at)
       SELECT 'default', 'n', '{}', CASE WHEN g % 2 = 0 THEN 'completed' ELSE 'ready' END, 0, g, 25, g, g
       FROM generate_series(1, 100000) AS g`,
    )
    const plans: string[] = []
    app.on('notice', (notice) => plans.push(notice.message ?? ''))
    await app.query(
      "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; " +
        'SET auto_explain.log_level = notice; SET client_min_messages = notice',
    )
    await calls()
    assert.ok(plans.length >= 6, `auto_explain reported the plans (${plans.length})`)
    const scans = plans.filter((plan) => /Seq Scan on jobs/.test(plan))
    assert.deepEqual(scans, [], 'no hot statement scans the jobs table')
    // The claim's promotion, which also ends the jobs past their start deadline, finds those with
    // one seek of the index that holds only unstarted jobs with a deadline, not a read of its
    // queues' ready or scheduled jobs.
    const expiry = plans.filter((plan) => /passed before it could start/.test(plan))
    assert.ok(expiry.length > 0, 'the expiry step was explained')
    for (const plan of expiry) assert.match(plan, /Index Scan using jobs_deadline/)
  })

  test('every hot function is planned without sequential scans (a migration that remakes one must keep it)', async (t) => {
    const { open, schema } = tempSchema(t)
    await open()
    const rows = await adminQuery<{ proname: string; proconfig: string[] | null }>(
      `SELECT p.proname, p.proconfig FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace
       WHERE n.nspname = $1`,
      [schema],
    )
    const hot = [
      'claim',
      'settle',
      'settle_and_claim',
      'renew',
      'recover_expired',
      'deliver',
      'wake',
      'wait_for_work',
    ]
    for (const name of hot) {
      const found = rows.filter((row) => row.proname === name)
      assert.ok(found.length > 0, `${name} exists`)
      for (const row of found)
        assert.ok(row.proconfig?.includes('enable_seqscan=off'), `${name}: ${row.proconfig}`)
    }
    const batch = rows.filter(
      (row) => row.proname === 'enqueue_batch' && row.proconfig?.includes('enable_seqscan=off'),
    )
    assert.equal(batch.length, 1, 'the enqueue_batch the store calls')
  })

  test('the jobs table is vacuumed by settings of its own, for a queue’s churn (migration 0008)', async (t) => {
    const { open, schema } = tempSchema(t)
    await open()
    const [row] = await adminQuery<{ options: string[] | null }>(
      'SELECT reloptions AS options FROM pg_class WHERE oid = $1::regclass',
      [`"${schema}".jobs`],
    )
    assert.deepEqual([...(row?.options ?? [])].sort(), [
      'autovacuum_vacuum_cost_delay=0',
      'autovacuum_vacuum_scale_factor=0.01',
      'autovacuum_vacuum_threshold=1000',
    ])
  })

  test('a waiting worker keeps consuming after its connections are terminated (pg_terminate_backend)', async (t) => {
    const { open, schema } = tempSchema(t)
    const worker = await open()
    const producer = await open()
    // The worker is listening, with pooled connections too.
    assert.deepEqual(await claimWithin(worker, 300), [])
    const waiting = waitReason(worker, { queues: ['default'], timeoutMs: 20_000 })
    await new Promise((resolve) => setTimeout(resolve, 200))

    // Every backend that ran something of this schema: the worker's listener and pool, the producer's pool.
    const killed = await adminQuery<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND query LIKE $1 AND pg_terminate_backend(pid)`,
      [`%${schema}%`],
    )
    assert.ok(killed.length >= 2, `terminated ${killed.length} backends`)

    // The waiter is woken when its listener comes back (notifications in between may be lost).
    assert.equal(await within(10_000, 'waitForWork', waiting), 'notified')
    // And a job enqueued from now on is claimed: the producer's pool reconnects too. Its first
    // query may meet a terminated connection: that is a store error the caller retries.
    let enqueued: string | undefined
    for (let attempt = 0; enqueued === undefined; attempt++) {
      try {
        enqueued = (await producer.enqueue({ jobs: [newJob()] }))[0]!.id
      } catch (error) {
        assert.ok(error instanceof FerryError && error.code === 'store_unavailable', String(error))
        assert.ok(attempt < 5, 'the producer never recovered')
      }
    }
    let claimed: string[] = []
    for (let attempt = 0; claimed.length === 0 && attempt < 5; attempt++) {
      try {
        claimed = await claimWithin(worker, 5000)
      } catch (error) {
        assert.ok(error instanceof FerryError && error.code === 'store_unavailable', String(error))
      }
    }
    assert.deepEqual(claimed, [enqueued])

    // Once more while idle: a notification reaches the re-established listener.
    const again = waitReason(worker, { queues: ['default'], timeoutMs: 10_000 })
    await new Promise((resolve) => setTimeout(resolve, 200))
    const [next] = await producer.enqueue({ jobs: [newJob()] })
    assert.equal(await within(5000, 'waitForWork', again), 'notified')
    assert.deepEqual(await claimWithin(worker, 1000), [next!.id])
  })

  test('one job without a unique key (a plain statement) is stored as enqueue_batch stores it, ready or scheduled', async (t) => {
    const { open, schema } = tempSchema(t)
    const store = await open()
    const now = 1_700_000_000_000
    const jobs = [
      newJob({
        queue: 'mail',
        name: 'send',
        payload: '{"to":"a"}',
        priority: 7,
        maxAttempts: 3,
        timeoutMs: 900,
      }),
      newJob({ delayMs: 5_000 }),
      newJob({ runAt: now - 1 }),
      newJob({ runAt: now + 60_000 }),
      newJob({ group: 'tenant ✓', expiresInMs: 60_000 }),
      newJob({ delayMs: 5_000, expiresAt: now + 10_000 }),
      newJob({ backoff: { type: 'fixed', delayMs: 5 }, schedule: { id: 'nightly', slot: now, late: false } }),
    ]
    const columns = `queue, name, payload, state, priority, run_at::text, attempts, max_attempts, timeout_ms,
      unique_key, lease_token, lease_expires_at, worker_id, last_error, result, created_at::text,
      updated_at::text, finished_at, delivered, group_key, expires_at::text, meta`
    for (const job of jobs) {
      const [alone] = await store.enqueue({ jobs: [job], now })
      assert.equal(alone!.created, true)
      // The statement the store sends for every other batch (functions/enqueue-batch.sql).
      const [batch] = await adminQuery<{ ids: string }>(new PostgresSchema(schema).interpolate(sql.enqueue), [
        ...enqueueArrays([job], plainArrays),
        now,
        null,
        ...uniqueModeArrays([job]),
      ])
      const rows = await adminQuery(
        `SELECT ${columns} FROM "${schema}".jobs WHERE id = ANY($1::bigint[]) ORDER BY id`,
        [[alone!.id, batch!.ids]],
      )
      assert.equal(rows.length, 2)
      assert.deepEqual(rows[0], rows[1], JSON.stringify(job))
      assert.deepEqual(
        [rows[0]!.group_key, rows[0]!.expires_at, rows[0]!.meta],
        [job.group, storedDeadline(job, now), metaOf(job)],
      )
      assert.ok(BigInt(alone!.id) < BigInt(batch!.ids), 'ids in enqueue order')
    }
  })

  test("a batch's integers at their columns' limits are stored as a caller's transaction stores them", async (t) => {
    const { open, schema } = tempSchema(t)
    const store = await open()
    const app = await appClient(t)
    const now = 1_700_000_000_000
    const batch = [
      newJob({ priority: -(2 ** 31), runAt: 2 ** 50, maxAttempts: 1, timeoutMs: 2 ** 31 - 1 }),
      newJob({ priority: 2 ** 31 - 1, delayMs: 86_400_000, timeoutMs: null, expiresAt: 2 ** 52 }),
      newJob({ queue: 'q', runAt: 1, expiresInMs: 2 ** 40 }),
    ]
    const columns = 'queue, state, priority, run_at::text, max_attempts, timeout_ms, expires_at::text'
    const { own, inTransaction } = await enqueueBothWays(store, app, batch, now)
    assert.deepEqual(
      [...own, ...inTransaction].map((result) => result.created),
      [true, true, true, true, true, true],
    )
    const rows = (results: { id: string }[]) => jobRows(schema, columns, results)
    assert.deepEqual(await rows(own), await rows(inTransaction))
    assert.deepEqual(
      (await rows(own)).map((row) => row.run_at),
      [String(2 ** 50), String(now + 86_400_000), '1'],
    )
    assert.deepEqual(
      (await rows(own)).map((row) => row.expires_at),
      [null, String(2 ** 52), String(now + 2 ** 40)],
    )
    // What is no integer of the type's range is left for the server to refuse, as before: in a
    // batch without unique keys the digits JavaScript writes (sql/enqueue-joined.sql), and in one
    // with a key a plain array (postgres-enqueue-arrays.test.ts).
    await assert.rejects(store.enqueue({ jobs: [newJob(), newJob({ priority: 2 ** 31 })] }), FerryError)
    await assert.rejects(store.enqueue({ jobs: [newJob(), newJob({ priority: 0.5 })] }), FerryError)
  })

  test("a batch without unique keys, sent as joined text, is stored as a caller's transaction stores it", async (t) => {
    const { open, schema } = tempSchema(t)
    const store = await open()
    const app = await appClient(t)
    const now = 1_700_000_000_000
    const batch = [
      newJob({ payload: '{"text":"é✓, \\"quoted\\"\\u001e","list":[1,2]}', runAt: 2 ** 50, timeoutMs: 5 }),
      newJob({ queue: 'other', name: 'x.y:z-1', priority: -3, delayMs: 86_400_000 }),
      newJob({ payload: '""', maxAttempts: 1, timeoutMs: 2 ** 31 - 1 }),
      // A caller of the store itself may send a text holding the separator: that batch goes as arrays.
      newJob({ payload: '"\x1e"' }),
    ]
    // Groups (any character: one holding the separator sends the batch as arrays) and deadlines.
    const grouped = [
      newJob({ group: 'tenant, "a" ✓', expiresInMs: 60_000 }),
      newJob(),
      newJob({ group: 'b', delayMs: 1_000, expiresAt: now + 5_000 }),
    ]
    const columns =
      'queue, name, payload, state, priority, run_at::text, max_attempts, timeout_ms, created_at::text, ' +
      'group_key, expires_at::text'
    const rows = (results: { id: string }[]) => jobRows(schema, columns, results)
    for (const jobs of [batch.slice(0, 3), batch]) {
      const { own, inTransaction } = await enqueueBothWays(store, app, jobs, now)
      assert.ok(own.every((result) => result.created))
      assert.deepEqual(await rows(own), await rows(inTransaction))
      assert.deepEqual(
        (await rows(own)).map((row) => [row.payload, row.state, row.run_at, row.timeout_ms]),
        jobs.map((job, i) => [
          job.payload,
          i === 0 || i === 1 ? 'scheduled' : 'ready',
          String(job.runAt ?? now + job.delayMs),
          job.timeoutMs,
        ]),
      )
    }
    for (const jobs of [grouped, [...grouped, newJob({ group: 'c\x1e' })]]) {
      const { own, inTransaction } = await enqueueBothWays(store, app, jobs, now)
      assert.deepEqual(await rows(own), await rows(inTransaction))
      assert.deepEqual(
        (await rows(own)).map((row) => [row.group_key, row.expires_at]),
        jobs.map((job) => [job.group, storedDeadline(job, now)]),
      )
    }
  })

  test('the jobs table has no CHECK constraint, which every single-row write planned anew (migration 0011)', async (t) => {
    const { open, schema } = tempSchema(t)
    await open()
    const checks = await adminQuery(
      `SELECT conname FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'c'`,
      [`"${schema}".jobs`],
    )
    assert.deepEqual(checks, [])
  })

  test('one job without a unique key is delivered to a waiter of another store, or wakes one at its run time', async (t) => {
    const { open } = tempSchema(t)
    const worker = await open()
    const producer = await open()
    const claim = { limit: 5, leaseMs: LEASE_MS, workerId: 'one' }
    const delivered = worker.waitForWork({ queues: ['default'], timeoutMs: 10_000, claim })
    await waitFor(
      async () => (await adminQuery(`SELECT 1 FROM "${worker.schema}".waiters`)).length > 0,
      5000,
      'a waiter',
    )
    const [job] = await producer.enqueue({ jobs: [newJob()] })
    const wake = await within(5000, 'waitForWork', delivered)
    assert.equal(wake.reason, 'delivered')
    assert.deepEqual(
      wake.jobs.map((leased) => [leased.id, leased.state, leased.workerId]),
      [[job!.id, 'active', 'one']],
    )
    // Scheduled: nothing to deliver; the waiter learns when it is due and wakes then.
    const due = worker.waitForWork({ queues: ['default'], timeoutMs: 10_000, claim })
    await waitFor(
      async () => (await adminQuery(`SELECT 1 FROM "${worker.schema}".waiters`)).length > 0,
      5000,
      'a waiter',
    )
    const started = Date.now()
    await producer.enqueue({ jobs: [newJob({ delayMs: 300 })] })
    const dueWake = await within(5000, 'waitForWork', due)
    assert.equal(dueWake.reason, 'due')
    assert.ok(Date.now() - started >= 250, 'not before its run time')
  })

  test('a delivery too large for one notification is read by id: leased, in claim order, as stored', async (t) => {
    const { open, schema } = tempSchema(t)
    const worker = await open()
    const producer = await open()
    const claim = { limit: 3, leaseMs: LEASE_MS, workerId: 'big' }
    const waiting = worker.waitForWork({ queues: ['default'], timeoutMs: 10_000, claim })
    await registeredWaiter(schema, 'big')
    // 9,000 bytes of payload: the rows cannot travel in NOTIFY's 8,000 bytes, only their ids.
    const large = JSON.stringify({ text: 'x'.repeat(9000) })
    const before = Date.now()
    const [low, high] = await producer.enqueue({
      jobs: [newJob({ payload: large }), newJob({ priority: 5 })],
      now: before,
    })
    const wake = await within(5000, 'waitForJobs', waiting)
    assert.equal(wake.reason, 'delivered')
    assert.deepEqual(
      wake.jobs.map((job) => job.id),
      [high!.id, low!.id],
      'priority first',
    )
    for (const job of wake.jobs) {
      const { leaseToken, ...seen } = job
      assert.ok(leaseToken.length > 0)
      assert.deepEqual(seen, await getJob(worker, job.id), 'as the store has it')
      assert.equal(job.state, 'active')
      assert.equal(job.attempts, 1)
      assert.equal(job.workerId, 'big')
      assert.equal(job.leaseExpiresAt, before + DELIVERY_LEASE_MS, 'a delivery lease, until taken')
    }
    assert.deepEqual(wake.jobs[1]!.payload, JSON.parse(large))
    const settled = (
      await worker.settle({
        settlements: wake.jobs.map((job) => ({ kind: 'completed', id: job.id, leaseToken: job.leaseToken })),
      })
    ).settled
    assert.deepEqual(settled, ['ok', 'ok'])
  })

  test('an enqueue in a caller transaction or from SQL hands no jobs: the waiter is woken to claim', async (t) => {
    const { open, schema } = tempSchema(t)
    const worker = await open()
    const store = await open()
    const app = await appClient(t)
    const claim = { limit: 5, leaseMs: LEASE_MS, workerId: 'w' }
    for (const enqueue of [
      async () => {
        await app.query('BEGIN')
        await createClient({ store }).enqueue('x', {}, { tx: app })
        await app.query('COMMIT')
      },
      () => app.query(`SELECT "${schema}".enqueue('x', '{}')`),
    ]) {
      const waiting = worker.waitForWork({ queues: ['default'], timeoutMs: 10_000, claim })
      const row = await registeredWaiter(schema, 'w')
      await enqueue()
      assert.deepEqual(await within(5000, 'waitForJobs', waiting), { reason: 'notified', jobs: [] })
      const [job] = await worker.claim({ queues: ['default'], ...claim })
      assert.equal(job?.attempts, 1, 'the job was still in line')
      // The wait's end took its registration out.
      await waitFor(
        async () =>
          (await adminQuery(`SELECT 1 FROM "${schema}".waiters WHERE id = $1`, [row.id])).length === 0,
        2_000,
        "the ended wait's row to be deleted",
      )
    }
  })

  test('a waiter whose listening connection was terminated (pg_terminate_backend) is handed nothing', async (t) => {
    const { open, schema } = tempSchema(t)
    const worker = await open()
    const producer = await open()
    const app = await appClient(t)
    const claim = { limit: 5, leaseMs: LEASE_MS, workerId: 'gone' }
    const waiting = worker.waitForWork({ queues: ['default'], timeoutMs: 20_000, claim })
    const row = await registeredWaiter(schema, 'gone')
    // The listening connection is the one that took the waiter's lock.
    const [listener] = await adminQuery<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE query LIKE $1 AND pg_terminate_backend(pid)`,
      [`%pg_try_advisory_lock(${row.lock_key})%`],
    )
    assert.ok(listener !== undefined, 'the listening connection was found')
    await waitFor(
      async () =>
        (await adminQuery('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [listener.pid])).length === 0,
      5_000,
      'the terminated backend to exit',
    )
    // An enqueue that finds the row (put back if the store's reconnection already took it out)
    // must see that its lock is free, drop it, and leave the job in line for anybody.
    await app.query('BEGIN')
    await putWaiter(app, schema, row)
    const { rows } = await app.query<{ id: string }>(
      `SELECT e.id::text AS id FROM "${schema}".enqueue_batch('{default}', '{x}', '{"{}"}', '{0}', '{NULL}',
         '{0}', '{3}', '{NULL}', '{NULL}', NULL, 'gone') AS e`,
    )
    const id = rows[0]!.id
    const job = await app.query<{ state: string; attempts: number; worker_id: string | null }>(
      `SELECT state, attempts, worker_id FROM "${schema}".jobs WHERE id = $1`,
      [id],
    )
    assert.deepEqual(job.rows[0], { state: 'ready', attempts: 0, worker_id: null })
    const waiters = await app.query(`SELECT 1 FROM "${schema}".waiters WHERE id = $1`, [row.id])
    assert.equal(waiters.rows.length, 0, 'the dead waiter was deleted')
    await app.query('COMMIT')

    // The store comes back (a new connection, a new lock) and deliveries reach it again.
    assert.equal((await within(10_000, 'waitForJobs', waiting)).reason, 'notified')
    assert.deepEqual(
      (await worker.claim({ queues: ['default'], ...claim })).map((j) => j.id),
      [id],
    )
    const again = worker.waitForWork({ queues: ['default'], timeoutMs: 10_000, claim })
    const renewed = await registeredWaiter(schema, 'gone')
    assert.notEqual(renewed.lock_key, row.lock_key)
    const [next] = await producer.enqueue({ jobs: [newJob()] })
    const wake = await within(5000, 'waitForJobs', again)
    assert.equal(wake.reason, 'delivered')
    assert.deepEqual(
      wake.jobs.map((j) => j.id),
      [next!.id],
    )
  })

  test('jobs delivered to a wait that had just ended go back in line, attempt unused, and wake waiters', async (t) => {
    const { open, schema } = tempSchema(t)
    const worker = await open()
    const producer = await open()
    const peer = await open()
    const app = await appClient(t)
    const claim = { limit: 5, leaseMs: LEASE_MS, workerId: 'late' }
    const controller = new AbortController()
    const waiting = worker.waitForWork({ queues: ['default'], signal: controller.signal, claim })
    const row = await registeredWaiter(schema, 'late')
    controller.abort()
    assert.deepEqual(await within(1000, 'waitForJobs', waiting), { reason: 'aborted', jobs: [] })
    // The wait's end takes its row out; put it back, as an enqueue that read it a moment before
    // the delete would have seen it. The enqueue then delivers to a store that no longer waits.
    await waitFor(
      async () =>
        (await adminQuery(`SELECT 1 FROM "${schema}".waiters WHERE id = $1`, [row.id])).length === 0,
      2_000,
      "the ended wait's row to be deleted",
    )
    await putWaiter(app, schema, row)
    const delivered = new Promise<string>((resolve) => app.once('notification', (m) => resolve(m.payload!)))
    await app.query(`LISTEN "${row.channel}"`)
    // A waiter elsewhere: every job of the enqueue is handed over, so only the give-back wakes it.
    const other = waitReason(peer, { queues: ['default'], timeoutMs: 10_000 })
    await new Promise((resolve) => setTimeout(resolve, 200))

    const [enqueued] = await producer.enqueue({ jobs: [newJob()] })
    const message = JSON.parse(await within(5000, 'the delivery', delivered)) as {
      w: string
      jobs: unknown[]
    }
    assert.equal(message.w, row.id)
    assert.equal(message.jobs.length, 1)
    assert.equal(await within(5000, 'waitForWork', other), 'notified')
    const job = await getJob(peer, enqueued!.id)
    assert.equal(job?.state, 'ready')
    assert.equal(job?.attempts, 0, 'the attempt is given back')
    assert.equal(job?.workerId, null)
    const [claimed] = await peer.claim({ queues: ['default'], limit: 1, leaseMs: LEASE_MS, workerId: 'next' })
    assert.equal(claimed?.id, enqueued!.id)
    assert.equal(claimed?.attempts, 1)
  })

  test("jobs delivered to a wait that had just ended go to the same worker's next wait", async (t) => {
    const { open, schema } = tempSchema(t)
    const worker = await open()
    const producer = await open()
    const app = await appClient(t)
    const claim = { limit: 5, leaseMs: LEASE_MS, workerId: 'loop' }
    const controller = new AbortController()
    const first = worker.waitForWork({ queues: ['default'], signal: controller.signal, claim })
    const stale = await registeredWaiter(schema, 'loop')
    controller.abort()
    assert.deepEqual(await within(1000, 'waitForJobs', first), { reason: 'aborted', jobs: [] })
    await waitFor(
      async () =>
        (await adminQuery(`SELECT 1 FROM "${schema}".waiters WHERE id = $1`, [stale.id])).length === 0,
      2_000,
      "the ended wait's row to be deleted",
    )
    // The worker waits again; the enqueue finds the earlier registration first (put back, as if
    // its delete had not yet run) and hands it the job.
    const second = worker.waitForWork({ queues: ['default'], timeoutMs: 10_000, claim })
    await waitFor(
      async () => (await adminQuery(`SELECT 1 FROM "${schema}".waiters WHERE worker_id = 'loop'`)).length > 0,
      5_000,
      'the second wait to register',
    )
    await putWaiter(app, schema, stale)
    const [enqueued] = await producer.enqueue({ jobs: [newJob()] })
    const wake = await within(5000, 'waitForJobs', second)
    assert.equal(wake.reason, 'delivered')
    assert.deepEqual(
      wake.jobs.map((job) => job.id),
      [enqueued!.id],
    )
    assert.equal(wake.jobs[0]!.attempts, 1)
    // The second wait's own registration is taken out: the next job is nobody's but in line.
    await waitFor(
      async () => (await adminQuery(`SELECT 1 FROM "${schema}".waiters`)).length === 0,
      2_000,
      'every registration to be deleted',
    )
    const [next] = await producer.enqueue({ jobs: [newJob()] })
    assert.equal((await getJob(producer, next!.id))?.state, 'ready')
  })

  test("a claim ends its own queues' jobs past their start deadline, the sweep any queue's, each with the expired error", async (t) => {
    const { open } = tempSchema(t)
    const store = await open()
    const t0 = 1_700_000_000_000
    const [ownExpiring, plain, otherExpiring] = await store.enqueue({
      jobs: [
        newJob({ queue: 'a', expiresAt: t0 + 1_000 }),
        newJob({ queue: 'a' }),
        newJob({ queue: 'b', expiresAt: t0 + 1_000 }),
      ],
      now: t0,
    })
    const at = t0 + 2_000
    const claimed = await store.claim({ queues: ['a'], limit: 5, leaseMs: LEASE_MS, workerId: 'w', now: at })
    assert.deepEqual(
      claimed.map((job) => job.id),
      [plain!.id],
    )
    const ended = await getJob(store, ownExpiring!.id)
    assert.deepEqual(
      [ended?.state, ended?.attempts, ended?.finishedAt, ended?.updatedAt, ended?.lastError],
      ['dead', 0, at, at, EXPIRED_ERROR],
    )
    assert.equal(
      (await getJob(store, otherExpiring!.id))?.state,
      'ready',
      'a queue the claim did not ask for',
    )
    assert.equal((await store.findExpiredLeases({ now: at })).startDeadlinesPassed, true)
    assert.deepEqual((await store.recoverExpired({ now: at })).expired, [], 'only with expireJobs')
    assert.deepEqual((await store.recoverExpired({ now: at, expireJobs: true, limit: 10 })).expired, [
      otherExpiring!.id,
    ])
    assert.deepEqual((await getJob(store, otherExpiring!.id))?.lastError, EXPIRED_ERROR)
    assert.equal((await store.findExpiredLeases({ now: at })).startDeadlinesPassed, false)
  })

  test('a job past its deadline beyond what one claim ends is passed over, never handed out', async (t) => {
    const { open } = tempSchema(t)
    const store = await open()
    const t0 = 1_700_000_000_000
    // 1,000 (one claim's bound) expire first; the last to expire would be the first claimed.
    await store.enqueue({
      jobs: Array.from({ length: 1_000 }, (_, i) => newJob({ expiresAt: t0 + 1 + i })),
      now: t0,
    })
    const [late] = await store.enqueue({ jobs: [newJob({ priority: 10, expiresAt: t0 + 5_000 })], now: t0 })
    const [plain] = await store.enqueue({ jobs: [newJob()], now: t0 })
    const at = t0 + 10_000
    const claim = { queues: ['default'], limit: 1, leaseMs: LEASE_MS, workerId: 'w', now: at }
    assert.deepEqual(
      (await store.claim(claim)).map((job) => job.id),
      [plain!.id],
    )
    assert.equal((await getJob(store, late!.id))?.state, 'ready', 'left by the first claim')
    assert.deepEqual(await store.claim(claim), [])
    assert.equal((await getJob(store, late!.id))?.state, 'dead', 'ended by the next')
    const [stats] = await store.stats({ now: at })
    assert.deepEqual([stats?.dead, stats?.expired], [1_001, 1_001])
  })

  test('a delivered job carries its group, start deadline, slot and backoff', async (t) => {
    const { open, schema } = tempSchema(t)
    const worker = await open()
    const producer = await open()
    const claim = { limit: 5, leaseMs: LEASE_MS, workerId: 'grouped' }
    const delivered = worker.waitForWork({ queues: ['default'], timeoutMs: 10_000, claim })
    await registeredWaiter(schema, 'grouped')
    const schedule = { id: 'nightly', slot: 1_700_000_000_000, late: true }
    const backoff = { type: 'fixed', delayMs: 5_000 } as const
    const [job] = await producer.enqueue({
      jobs: [newJob({ group: 'tenant-1', expiresInMs: 60_000, schedule, backoff })],
    })
    const wake = await within(5000, 'waitForWork', delivered)
    assert.equal(wake.reason, 'delivered')
    const stored = await getJob(producer, job!.id)
    assert.ok(stored?.expiresAt !== null)
    assert.deepEqual(
      wake.jobs.map((leased) => [leased.id, leased.group, leased.expiresAt, leased.schedule, leased.backoff]),
      [[job!.id, 'tenant-1', stored?.expiresAt, schedule, backoff]],
    )
  })

  // On a server of the test's own: restarting the shared one would disturb every other test.
  test(
    'a waiting worker keeps consuming after the server restarts',
    skipUnlessAvailable(privatePostgresUnavailable()),
    async (t) => {
      const server = await privatePostgres(t)
      const open = async (): Promise<PostgresStore> => {
        const store = await PostgresStore.open({ connectionString: server.url, poolSize: 2 })
        defer(t, () => store.close())
        return store
      }
      const worker = await open()
      const producer = await open()
      assert.deepEqual(await claimWithin(worker, 300), [])
      const waiting = waitReason(worker, { queues: ['default'], timeoutMs: 60_000 })
      await new Promise((resolve) => setTimeout(resolve, 200))
      await server.restart()
      // Woken once its listener is back (what was sent while the server was down is lost).
      assert.equal(await within(30_000, 'waitForWork', waiting), 'notified')
      let enqueued: string | undefined
      const deadline = Date.now() + 30_000
      while (enqueued === undefined) {
        try {
          enqueued = (await producer.enqueue({ jobs: [newJob()] }))[0]!.id
        } catch (error) {
          assert.ok(error instanceof FerryError && error.code === 'store_unavailable', String(error))
          assert.ok(Date.now() < deadline, 'the producer never recovered')
          await new Promise((resolve) => setTimeout(resolve, 200))
        }
      }
      let claimed: string[] = []
      while (claimed.length === 0 && Date.now() < deadline) {
        try {
          claimed = await claimWithin(worker, 5000)
        } catch (error) {
          assert.ok(error instanceof FerryError && error.code === 'store_unavailable', String(error))
        }
      }
      assert.deepEqual(claimed, [enqueued])
      const again = waitReason(worker, { queues: ['default'], timeoutMs: 10_000 })
      await new Promise((resolve) => setTimeout(resolve, 200))
      const [next] = await producer.enqueue({ jobs: [newJob()] })
      assert.equal(await within(5000, 'waitForWork', again), 'notified')
      assert.deepEqual(await claimWithin(worker, 1000), [next!.id])
    },
  )
})
