/**
 * What a worker does with each way an attempt can end, checked in the store it settles to (a real
 * SQLite file): retries at the backoff time, dead jobs, snoozes, timeouts, unknown names, results.
 * Handlers come from tests/support/handlers/scripted.ts (loaded by path, as `ferry work` does)
 * or, where the test must see inside the handler, are written inline.
 */
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'

import {
  createClient,
  snooze,
  type ClaimedJob,
  type EnqueueOptions,
  type Job,
  type JobContext,
  type JobError,
  type JobHandlers,
} from '../../src/index.js'
import type { SqliteStore } from '../../src/sqlite.js'
import type { ScriptPayload } from '../support/handlers/scripted.js'
import { waitForEvent } from '../support/async.js'
import { tempStore } from '../support/sqlite-harness.js'
import { getExistingJob } from '../support/store-calls.js'
import { createWorker, fixtureHandlers, type StartedWorker } from '../support/workers.js'

const SCRIPTED = fixtureHandlers('scripted.ts')
// Long enough that a failed attempt's settle commits before its retry is due: the first test reads
// the stored job when the failure is reported, and a retry already due would be claimed again by
// the same commit (the worker settles and claims in one transaction). At 20 ms that happened on a
// loaded machine.
const BACKOFF = { baseMs: 100, maxMs: 250 }

interface Setup extends StartedWorker {
  store: SqliteStore
  enqueue: (name: string, payload: unknown, options?: EnqueueOptions) => Promise<string>
}

/** A store and a worker on it (not started, so listeners can be attached first). */
async function setup(
  t: TestContext,
  handlers: JobHandlers | string = SCRIPTED,
  options: { defaultTimeoutMs?: number } = {},
): Promise<Setup> {
  const { store } = await tempStore(t)
  const client = createClient({ store })
  const started = createWorker(t, { store, handlers, backoff: BACKOFF, concurrency: 4, ...options })
  return {
    ...started,
    store,
    enqueue: async (name, payload, enqueueOptions) =>
      (await client.enqueue(name, payload, enqueueOptions)).id,
  }
}

function script(...steps: ScriptPayload['steps']): ScriptPayload {
  return { steps }
}

/** The nominal backoff before attempt k + 1; the real delay lies in [nominal / 2, nominal]. */
function nominalBackoff(attempt: number): number {
  return Math.min(BACKOFF.maxMs, BACKOFF.baseMs * 2 ** (attempt - 1))
}

test('a job that fails twice then succeeds is retried at its backoff times, each error stored', async (t) => {
  const { worker, errors, store, enqueue } = await setup(t)
  const id = await enqueue(
    'script',
    script({ throw: 'flaky 1' }, { throw: 'flaky 2' }, { result: { ok: 1 } }),
  )

  const claims: { job: ClaimedJob; at: number }[] = []
  const failures: { job: ClaimedJob; error: JobError; retryAt: number; at: number; stored: Job | null }[] = []
  worker.on('job:claimed', (job) => claims.push({ job, at: Date.now() }))
  worker.on('job:failed', (job, error, retryAt) => {
    const at = Date.now()
    // SQLite reads are synchronous: this is the stored job at the moment of the event, before
    // the retry (which waits for its backoff timer) can claim it again.
    void getExistingJob(store, job.id).then((stored) => failures.push({ job, error, retryAt, at, stored }))
  })
  const completed = waitForEvent(worker, 'job:completed')
  await worker.start()
  const [, result] = await completed

  assert.deepEqual(result, { ok: 1 })
  assert.deepEqual(
    claims.map(({ job }) => job.attempts),
    [1, 2, 3],
  )
  assert.equal(failures.length, 2)
  failures.forEach(({ job, error, retryAt, at, stored }, i) => {
    const attempt = i + 1
    const label = `failure of attempt ${attempt}`
    assert.equal(job.attempts, attempt, label)
    assert.equal(error.kind, 'error', label)
    assert.equal(error.name, 'Error', label)
    assert.equal(error.message, `flaky ${attempt}`, label)
    assert.match(error.stack ?? '', new RegExp(`^Error: flaky ${attempt}\\n\\s+at .*scripted\\.ts`), label)
    // Stored as it was reported, scheduled for the retry time.
    assert.ok(stored !== null)
    assert.equal(stored.state, 'scheduled', label)
    assert.equal(stored.attempts, attempt, label)
    assert.equal(stored.runAt, retryAt, label)
    assert.deepEqual(stored.lastError, error, label)
    // The retry time is the backoff after the failure, and the next attempt waited for it.
    const nominal = nominalBackoff(attempt)
    assert.ok(retryAt - claims[i]!.at >= nominal / 2, `${label}: retry at +${retryAt - claims[i]!.at} ms`)
    assert.ok(retryAt - at <= nominal, `${label}: retry at ${retryAt - at} ms after the event`)
    assert.ok(claims[i + 1]!.at >= retryAt, `${label}: retried ${retryAt - claims[i + 1]!.at} ms early`)
  })

  const job = await getExistingJob(store, id)
  assert.equal(job.state, 'completed')
  assert.equal(job.attempts, 3)
  assert.deepEqual(job.result, { ok: 1 })
  assert.ok(job.finishedAt !== null)
  assert.deepEqual(worker.counts, {
    claimed: 3,
    completed: 1,
    failed: 2,
    dead: 0,
    snoozed: 0,
    leaseLost: 0,
  })
  assert.deepEqual(errors, [])
})

test('a handler that throws a non-Error fails with kind non_error and the value in the message', async (t) => {
  const { worker, errors, store, enqueue } = await setup(t)
  const stringId = await enqueue('script', script({ throwValue: 'plain string' }), { maxAttempts: 1 })
  const objectId = await enqueue('script', script({ throwValue: { code: 42 } }), { maxAttempts: 1 })
  const bothDead = waitForEvent(worker, 'job:dead', () => worker.counts.dead === 2)
  await worker.start()
  await bothDead

  const byString = await getExistingJob(store, stringId)
  assert.equal(byString.state, 'dead')
  assert.equal(byString.lastError?.kind, 'non_error')
  assert.match(byString.lastError?.message ?? '', /"plain string"/)
  const byObject = await getExistingJob(store, objectId)
  assert.equal(byObject.lastError?.kind, 'non_error')
  assert.match(byObject.lastError?.message ?? '', /\{"code":42\}/)
  assert.deepEqual(errors, [])
})

test('permanentFailure makes the job dead at once, whatever attempts are left', async (t) => {
  const { worker, errors, store, enqueue } = await setup(t)
  const id = await enqueue('script', script({ permanent: 'card 4242 was declined' }), { maxAttempts: 25 })
  const dead = waitForEvent(worker, 'job:dead')
  await worker.start()
  const [, error] = await dead

  assert.equal(error.kind, 'permanent')
  const job = await getExistingJob(store, id)
  assert.equal(job.state, 'dead')
  assert.equal(job.attempts, 1)
  assert.equal(job.lastError?.kind, 'permanent')
  assert.equal(job.lastError?.message, 'card 4242 was declined')
  assert.ok(job.finishedAt !== null)
  assert.equal(worker.counts.failed, 0)
  assert.deepEqual(errors, [])
})

test('a job that fails on every attempt is dead after maxAttempts, with the last error', async (t) => {
  const { worker, errors, store, enqueue } = await setup(t)
  const id = await enqueue('script', script({ throw: 'always broken' }), { maxAttempts: 3 })
  const dead = waitForEvent(worker, 'job:dead')
  await worker.start()
  const [deadJob, error] = await dead

  assert.equal(deadJob.attempts, 3)
  assert.equal(error.kind, 'error')
  const job = await getExistingJob(store, id)
  assert.equal(job.state, 'dead')
  assert.equal(job.attempts, 3)
  assert.equal(job.maxAttempts, 3)
  assert.equal(job.lastError?.message, 'always broken')
  assert.deepEqual(worker.counts, {
    claimed: 3,
    completed: 0,
    failed: 2,
    dead: 1,
    snoozed: 0,
    leaseLost: 0,
  })
  assert.deepEqual(errors, [])
})

test('a snoozed job runs again after the delay without the attempt being counted', async (t) => {
  const calls: { attempt: number; at: number }[] = []
  const { worker, errors, store, enqueue } = await setup(t, {
    patient: (_payload: unknown, { attempt }: JobContext) => {
      calls.push({ attempt, at: Date.now() })
      if (calls.length === 1) snooze(150)
      return 'ready now'
    },
  })
  const id = await enqueue('patient', null, { maxAttempts: 1 })
  let whileSnoozed: Promise<Job | null> | undefined
  const snoozed = waitForEvent(worker, 'job:snoozed')
  // Synchronous SQLite read: the job as the snooze left it.
  worker.on('job:snoozed', (job) => (whileSnoozed ??= getExistingJob(store, job.id)))
  const completed = waitForEvent(worker, 'job:completed')
  await worker.start()
  const [, runAt] = await snoozed
  const [, result] = await completed

  const stored = await whileSnoozed
  assert.equal(stored?.state, 'scheduled')
  assert.equal(stored?.attempts, 0)
  assert.equal(stored?.runAt, runAt)
  assert.equal(stored?.lastError, null)
  assert.ok(runAt - calls[0]!.at >= 150)
  // Both runs were attempt 1 of 1: the snooze used no attempt (else maxAttempts 1 would forbid a rerun).
  assert.deepEqual(
    calls.map((call) => call.attempt),
    [1, 1],
  )
  assert.ok(calls[1]!.at >= runAt, `ran again ${runAt - calls[1]!.at} ms before its time`)
  assert.equal(result, 'ready now')
  const job = await getExistingJob(store, id)
  assert.equal(job.state, 'completed')
  assert.equal(job.attempts, 1)
  assert.equal(job.result, 'ready now')
  assert.deepEqual(errors, [])
})

test('a job whose name has no handler stays in line, its attempts unused, while the worker runs the next', async (t) => {
  const { worker, errors, store, enqueue } = await setup(t)
  const id = await enqueue('no-such-job', { x: 1 }, { maxAttempts: 2, priority: 5 })
  const nextId = await enqueue('script', script({ result: 'ran' }))
  const claimed: string[] = []
  worker.on('job:claimed', (job) => claimed.push(job.name))
  const done = waitForEvent(worker, 'job:completed', (job) => job.id === nextId)
  await worker.start()
  await done

  const job = await getExistingJob(store, id)
  assert.equal(job.state, 'ready')
  assert.equal(job.attempts, 0)
  assert.equal(job.lastError, null)
  assert.deepEqual(claimed, ['script'], 'the worker claimed only what it has a handler for')
  assert.deepEqual(errors, [])
})

test("an attempt past its timeoutMs fails with kind 'timeout' and the handler's signal is aborted", async (t) => {
  const signals = new Map<string, { signal: AbortSignal; startedAt: number; abortedAt?: number }>()
  const { worker, errors, store, enqueue } = await setup(
    t,
    {
      // Stops when told to, as a handler should.
      cooperative: ({ key }: { key: string }, { signal }: JobContext) => {
        const seen: { signal: AbortSignal; startedAt: number; abortedAt?: number } = {
          signal,
          startedAt: Date.now(),
        }
        signals.set(key, seen)
        return new Promise<string>((resolve) =>
          signal.addEventListener('abort', () => {
            seen.abortedAt = Date.now()
            resolve('stopped')
          }),
        )
      },
      // Ignores its signal and never ends: the attempt must still time out and free its slot.
      stubborn: ({ key }: { key: string }, { signal }: JobContext) => {
        signals.set(key, { signal, startedAt: Date.now() })
        return new Promise(() => {})
      },
    },
    { defaultTimeoutMs: 250 },
  )
  const ownTimeout = await enqueue('cooperative', { key: 'own' }, { timeoutMs: 100, maxAttempts: 1 })
  const workerDefault = await enqueue('cooperative', { key: 'default' }, { maxAttempts: 1 })
  const ignoring = await enqueue('stubborn', { key: 'stubborn' }, { timeoutMs: 100, maxAttempts: 1 })
  const allDead = waitForEvent(worker, 'job:dead', () => worker.counts.dead === 3, 5000)
  await worker.start()
  await allDead

  for (const [id, timeoutMs, key] of [
    [ownTimeout, 100, 'own'],
    [workerDefault, 250, 'default'],
    [ignoring, 100, 'stubborn'],
  ] as const) {
    const job = await getExistingJob(store, id)
    assert.equal(job.state, 'dead', key)
    assert.deepEqual(
      job.lastError,
      { kind: 'timeout', message: `timed out after ${timeoutMs} ms`, timeoutMs },
      key,
    )
    const seen = signals.get(key)!
    assert.equal(seen.signal.aborted, true, `${key}: the handler's signal was not aborted`)
    if (seen.abortedAt !== undefined) {
      const ranMs = seen.abortedAt - seen.startedAt
      assert.ok(ranMs >= timeoutMs - 5 && ranMs < timeoutMs + 1000, `${key}: aborted after ${ranMs} ms`)
    }
  }
  assert.equal(worker.activeCount, 0)
  assert.deepEqual(errors, [])
})

test('a result that cannot be stored as JSON makes the job dead with a message saying why', async (t) => {
  const { worker, errors, store, enqueue } = await setup(t, {
    'count-rows': () => ({ rows: 10n }),
  })
  const id = await enqueue('count-rows', null, { maxAttempts: 25 })
  const dead = waitForEvent(worker, 'job:dead')
  await worker.start()
  await dead

  const job = await getExistingJob(store, id)
  assert.equal(job.state, 'dead')
  assert.equal(job.attempts, 1)
  assert.equal(job.result, null)
  assert.equal(job.lastError?.kind, 'permanent')
  assert.match(job.lastError?.message ?? '', /result cannot be stored/)
  assert.match(job.lastError?.message ?? '', /result\.rows.*bigint/)
  assert.deepEqual(errors, [])
})

test("a handler's JSON result is stored as job.result; no return value is stored as null", async (t) => {
  const { worker, errors, store, enqueue } = await setup(t, {
    report: () => ({ id: 7, tags: ['a', 'b'], nested: { ok: true, none: null }, at: new Date(0) }),
    'fire-and-forget': () => undefined,
  })
  const reportId = await enqueue('report', null)
  const voidId = await enqueue('fire-and-forget', null)
  const bothDone = waitForEvent(worker, 'job:completed', () => worker.counts.completed === 2)
  await worker.start()
  await bothDone

  const report = await getExistingJob(store, reportId)
  assert.equal(report.state, 'completed')
  assert.deepEqual(report.result, {
    id: 7,
    tags: ['a', 'b'],
    nested: { ok: true, none: null },
    at: '1970-01-01T00:00:00.000Z',
  })
  const nothing = await getExistingJob(store, voidId)
  assert.equal(nothing.state, 'completed')
  assert.equal(nothing.result, null)
  assert.deepEqual(errors, [])
})
