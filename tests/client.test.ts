/**
 * The producer API against a real SQLite file: what an enqueue stores survives closing the store,
 * bad input is refused with nothing written, and concurrent enqueues share commits.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import {
  createClient,
  defineJobs,
  ValidationError,
  type EnqueueOptions,
  type Store,
  type ValidationErrorCode,
} from '../src/index.js'
import { allJobs } from './support/store-harness.js'
import { tempDatabase } from './support/sqlite-harness.js'
import { getJob } from './support/store-calls.js'

async function assertEmpty(store: Store): Promise<void> {
  assert.deepEqual(await store.stats(), [])
  assert.deepEqual((await store.listJobs()).jobs, [])
}

/** Asserts that `promise` rejects with a ValidationError with this code and field. */
async function rejectsValidation(promise: Promise<unknown>, code: ValidationErrorCode, field: string) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ValidationError, `expected a ValidationError, got ${String(error)}`)
    assert.equal(error.code, code, error.message)
    assert.equal(error.field, field, error.message)
    return true
  })
}

test('priority, delay, maxAttempts, timeoutMs and uniqueKey survive closing and reopening the store', async (t) => {
  const db = tempDatabase(t)
  let store = await db.open()
  let client = createClient({ store })
  const before = Date.now()
  const delayed = await client.enqueue(
    'send-email',
    { to: 'ada@example.com', tags: ['welcome'], born: new Date(Date.UTC(1815, 11, 10)) },
    {
      queue: 'mail',
      priority: 7,
      delayMs: 60_000,
      maxAttempts: 3,
      timeoutMs: 5000,
      uniqueKey: 'welcome:ada',
    },
  )
  const after = Date.now()
  const runAt = Date.UTC(2040, 5, 1, 12, 0, 0, 123)
  const atInstant = await client.enqueue('report', { month: '2040-05' }, { priority: -2_147_483_648, runAt })
  const plain = await client.enqueue('ping', null)
  assert.deepEqual(
    [delayed.created, atInstant.created, plain.created],
    [true, true, true],
    'each enqueue created a job',
  )
  await client.close()
  await store.close()

  store = await db.open()
  client = createClient({ store })
  const first = await getJob(store, delayed.id)
  assert.ok(first !== null)
  assert.equal(first.queue, 'mail')
  assert.equal(first.name, 'send-email')
  assert.deepEqual(first.payload, {
    to: 'ada@example.com',
    tags: ['welcome'],
    born: '1815-12-10T00:00:00.000Z',
  })
  assert.equal(first.state, 'scheduled')
  assert.equal(first.priority, 7)
  assert.ok(
    first.runAt >= before + 60_000 && first.runAt <= after + 60_000,
    `runAt ${first.runAt} is not 60 s on`,
  )
  assert.equal(first.attempts, 0)
  assert.equal(first.maxAttempts, 3)
  assert.equal(first.timeoutMs, 5000)
  assert.equal(first.uniqueKey, 'welcome:ada')

  const second = await getJob(store, atInstant.id)
  assert.ok(second !== null)
  assert.equal(second.state, 'scheduled')
  assert.equal(second.priority, -2_147_483_648)
  assert.equal(second.runAt, runAt)
  assert.deepEqual(second.payload, { month: '2040-05' })

  const third = await getJob(store, plain.id)
  assert.ok(third !== null)
  assert.equal(third.queue, 'default')
  assert.equal(third.state, 'ready')
  assert.equal(third.priority, 0)
  assert.equal(third.payload, null)
  assert.equal(third.maxAttempts, 25)
  assert.equal(third.timeoutMs, null)
  assert.equal(third.uniqueKey, null)

  // The unique key still holds after the reopen: the same key returns the same job and writes nothing.
  const again = await client.enqueue(
    'send-email',
    { to: 'someone-else@example.com' },
    { uniqueKey: 'welcome:ada' },
  )
  assert.deepEqual(again, { id: delayed.id, created: false })
  assert.equal((await allJobs(store)).length, 3)
  assert.deepEqual((await getJob(store, delayed.id))?.payload, first.payload)
  await client.close()
})

test('a second enqueue with the same uniqueKey returns the first job and writes nothing', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const client = createClient({ store })
  const first = await client.enqueue('charge', { orderId: 1 }, { uniqueKey: 'order:1' })
  const [same, other] = await Promise.all([
    client.enqueue('charge', { orderId: 1, retried: true }, { uniqueKey: 'order:1', priority: 9 }),
    client.enqueue('charge', { orderId: 2 }, { uniqueKey: 'order:2' }),
  ])
  assert.deepEqual(same, { id: first.id, created: false })
  assert.equal(other?.created, true)
  const jobs = await allJobs(store)
  assert.deepEqual(
    jobs.map((job) => [job.uniqueKey, job.payload, job.priority]),
    [
      ['order:1', { orderId: 1 }, 0],
      ['order:2', { orderId: 2 }, 0],
    ],
  )
  await client.close()
})

test('every bad input rejects with a ValidationError naming the field and writes nothing', async (t) => {
  const db = tempDatabase(t)
  let store = await db.open()
  const client = createClient({ store })
  const small = createClient({ store, maxPayloadBytes: 1024 })
  const cycle: Record<string, unknown> = {}
  cycle.self = cycle
  const cases: [string, () => Promise<unknown>, ValidationErrorCode, string][] = [
    ['bad queue', () => client.enqueue('n', {}, { queue: 'no spaces' }), 'invalid_queue', 'queue'],
    ['bad job name', () => client.enqueue('no/slashes', {}), 'invalid_name', 'name'],
    [
      'a Map in the payload',
      () => client.enqueue('n', { when: new Map() }),
      'invalid_payload',
      'payload.when',
    ],
    ['NaN in the payload', () => client.enqueue('n', { a: { b: NaN } }), 'invalid_payload', 'payload.a.b'],
    [
      'undefined in a list',
      () => client.enqueue('n', { list: [1, 2, undefined] }),
      'invalid_payload',
      'payload.list[2]',
    ],
    ['a BigInt in the payload', () => client.enqueue('n', { n: 1n }), 'invalid_payload', 'payload.n'],
    ['a cycle in the payload', () => client.enqueue('n', cycle), 'invalid_payload', 'payload.self'],
    ['an undefined payload', () => client.enqueue('n', undefined), 'invalid_payload', 'payload'],
    [
      'oversize payload',
      () => small.enqueue('n', { blob: 'x'.repeat(2000) }),
      'payload_too_large',
      'payload',
    ],
    [
      'payload over the default 1 MiB',
      () => client.enqueue('n', 'x'.repeat(1024 * 1024)),
      'payload_too_large',
      'payload',
    ],
    ['fractional priority', () => client.enqueue('n', {}, { priority: 1.5 }), 'invalid_priority', 'priority'],
    [
      'priority past int32',
      () => client.enqueue('n', {}, { priority: 2 ** 31 }),
      'invalid_priority',
      'priority',
    ],
    ['negative delay', () => client.enqueue('n', {}, { delayMs: -1 }), 'invalid_delay', 'delayMs'],
    ['NaN delay', () => client.enqueue('n', {}, { delayMs: NaN }), 'invalid_delay', 'delayMs'],
    [
      'delay and runAt',
      () => client.enqueue('n', {}, { delayMs: 1, runAt: Date.now() }),
      'invalid_option',
      'runAt',
    ],
    ['invalid runAt', () => client.enqueue('n', {}, { runAt: new Date('soon') }), 'invalid_run_at', 'runAt'],
    [
      'zero maxAttempts',
      () => client.enqueue('n', {}, { maxAttempts: 0 }),
      'invalid_max_attempts',
      'maxAttempts',
    ],
    ['zero timeout', () => client.enqueue('n', {}, { timeoutMs: 0 }), 'invalid_timeout', 'timeoutMs'],
    ['empty unique key', () => client.enqueue('n', {}, { uniqueKey: '' }), 'invalid_unique_key', 'uniqueKey'],
    [
      'misspelt option',
      () => client.enqueue('n', {}, { priorty: 1 } as unknown as EnqueueOptions),
      'invalid_option',
      'priorty',
    ],
  ]
  for (const [label, enqueue, code, field] of cases) {
    await t.test(label, async () => {
      await rejectsValidation(enqueue(), code, field)
      await assertEmpty(store)
    })
  }
  await client.close()
  await small.close()
  await store.close()
  store = await db.open()
  await assertEmpty(store)
})

test('a bad job in the middle of enqueueMany rejects the whole batch and writes none of it', async (t) => {
  const db = tempDatabase(t)
  let store = await db.open()
  const client = createClient({ store })
  const batch = [
    { name: 'a', payload: { n: 0 } },
    { name: 'a', payload: { n: 1 }, options: { priority: 3 } },
    { name: 'a', payload: { n: 2 }, options: { priority: 'high' as unknown as number } },
    { name: 'a', payload: { n: 3 } },
  ]
  await rejectsValidation(client.enqueueMany(batch), 'invalid_priority', 'jobs[2].priority')
  await rejectsValidation(
    client.enqueueMany([
      { name: 'a', payload: 1 },
      { name: 'a', payload: { at: new Set() } },
    ]),
    'invalid_payload',
    'jobs[1].payload.at',
  )
  await rejectsValidation(
    client.enqueueMany([
      { name: 'a', payload: 1 },
      { name: 'bad name', payload: 2 },
    ]),
    'invalid_name',
    'jobs[1].name',
  )
  await assertEmpty(store)
  await client.close()
  await store.close()
  store = await db.open()
  await assertEmpty(store)
})

test('enqueueMany writes every job of a good batch, with results in input order', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const client = createClient({ store })
  const results = await client.enqueueMany([
    { name: 'a', payload: { n: 0 } },
    { name: 'b', payload: { n: 1 }, options: { queue: 'other', priority: 5 } },
    { name: 'c', payload: { n: 2 }, options: { delayMs: 60_000 } },
  ])
  assert.equal(results.length, 3)
  const jobs = await Promise.all(results.map(({ id }) => getJob(store, id)))
  assert.deepEqual(
    jobs.map((job) => [job?.name, job?.queue, job?.payload, job?.priority, job?.state]),
    [
      ['a', 'default', { n: 0 }, 0, 'ready'],
      ['b', 'other', { n: 1 }, 5, 'ready'],
      ['c', 'default', { n: 2 }, 0, 'scheduled'],
    ],
  )
  assert.deepEqual(await client.enqueueMany([]), [])
  await client.close()
})

test('a bad enqueue issued with good ones in the same tick fails alone', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const client = createClient({ store })
  const outcomes = await Promise.allSettled([
    client.enqueue('a', { n: 1 }),
    client.enqueue('a', { n: 2 }, { queue: '' }),
    client.enqueue('a', { n: 3 }),
  ])
  assert.deepEqual(
    outcomes.map((outcome) => outcome.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  )
  assert.deepEqual(
    (await allJobs(store)).map((job) => job.payload),
    [{ n: 1 }, { n: 3 }],
  )
  await client.close()
})

test('1,000 concurrent enqueues resolve with distinct ids in order, share one commit and all survive a reopen', async (t) => {
  const db = tempDatabase(t)
  let store = await db.open()
  // Counts the Store.enqueue calls the client makes: each is one transaction (the contract makes
  // a call atomic). Everything else goes straight to the real store.
  const enqueueCalls: number[] = []
  const counted = new Proxy(store, {
    get(target, key) {
      if (key === 'enqueue') {
        return (params: Parameters<Store['enqueue']>[0]) => {
          enqueueCalls.push(params.jobs.length)
          return target.enqueue(params)
        }
      }
      const value: unknown = Reflect.get(target, key)
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    },
  })
  const client = createClient({ store: counted })
  const results = await Promise.all(
    Array.from({ length: 1000 }, (_, i) => client.enqueue('n', { i }, { priority: i % 10 })),
  )
  const ids = results.map((result) => result.id)
  assert.equal(new Set(ids).size, 1000)
  for (let i = 1; i < ids.length; i++) {
    assert.ok(
      BigInt(ids[i - 1]!) < BigInt(ids[i]!),
      `id ${ids[i]} of enqueue ${i} is not after ${ids[i - 1]}`,
    )
  }
  assert.deepEqual(enqueueCalls, [1000], 'enqueues issued in one tick share one Store.enqueue call')
  await client.close()
  await store.close()

  store = await db.open()
  for (const [i, id] of ids.entries()) {
    const job = await getJob(store, id)
    assert.deepEqual([job?.payload, job?.priority], [{ i }, i % 10], `job ${id}`)
  }
  assert.equal((await allJobs(store)).length, 1000)
})

test('enqueues issued while a commit is in flight gather into the next commit', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const batches: number[] = []
  const counted = new Proxy(store, {
    get(target, key) {
      if (key === 'enqueue') {
        return (params: Parameters<Store['enqueue']>[0]) => {
          batches.push(params.jobs.length)
          return target.enqueue(params)
        }
      }
      const value: unknown = Reflect.get(target, key)
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    },
  })
  const client = createClient({ store: counted })
  const pending: Promise<unknown>[] = []
  // Five waves, each issued on a later turn of the event loop than the one before.
  for (let wave = 0; wave < 5; wave++) {
    for (let i = 0; i < 100; i++) pending.push(client.enqueue('n', { wave, i }))
    await new Promise((resolve) => setImmediate(resolve))
  }
  await Promise.all(pending)
  await client.close()
  assert.equal(
    batches.reduce((sum, n) => sum + n, 0),
    500,
  )
  assert.ok(batches.length <= 5, `500 enqueues took ${batches.length} commits`)
  assert.equal((await allJobs(store)).length, 500)
})

// A handler module's type, as a producer would import it with `import type`.
const jobs = defineJobs({
  'send-email': async (payload: { to: string }) => `sent to ${payload.to}`,
  'resize-image': async (payload: { url: string; width: number }) => payload.width,
})

test('a typed client takes each job name with its own payload', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const client = createClient<typeof jobs>({ store })
  const email = await client.enqueue('send-email', { to: 'ada@example.com' }, { priority: 1 })
  const [image] = await client.enqueueMany([{ name: 'resize-image', payload: { url: '/a.png', width: 64 } }])
  assert.deepEqual((await getJob(store, email.id))?.payload, { to: 'ada@example.com' })
  assert.deepEqual((await getJob(store, image!.id))?.payload, { url: '/a.png', width: 64 })
  // defineJobs hands the handlers back unchanged, with their own types.
  assert.equal(await jobs['send-email']({ to: 'ada@example.com' }), 'sent to ada@example.com')
  await client.close()
})

// Never called: these show what the typed client refuses at compile time. `npx tsc -p
// tsconfig.check.json` (part of npm run lint) fails if any line under an expect-error mark type-checks.
async function typedClientRefuses(store: Store): Promise<void> {
  const client = createClient<typeof jobs>({ store })
  // @ts-expect-error -- a payload of the wrong shape
  await client.enqueue('send-email', { wrong: 1 })
  // @ts-expect-error -- 'to' must be a string
  await client.enqueue('send-email', { to: 42 })
  // @ts-expect-error -- another job's payload
  await client.enqueue('send-email', { url: '/a.png', width: 64 })
  // @ts-expect-error -- a job name no handler has
  await client.enqueue('send-sms', { to: '+100' })
  // @ts-expect-error -- an option that does not exist
  await client.enqueue('send-email', { to: 'a@example.com' }, { priorty: 1 })
  // @ts-expect-error -- a job name no handler has, in a batch
  await client.enqueueMany([{ name: 'send-sms', payload: { to: '+100' } }])
}
void typedClientRefuses
