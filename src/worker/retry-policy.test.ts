import assert from 'node:assert/strict'
import { test } from 'node:test'

import type { ClaimedJob, JobBackoff, JobError } from '../core/job.js'
import type { ExecutionOutcome } from './executors/executor.js'
import { decideSettlement, type AbortCause } from './retry-policy.js'

const NOW = 1_700_000_000_000
/** The backoff's jitter at its lowest: a retry waits half its nominal delay. */
const lowest = () => 0
const BACKOFF = { baseMs: 1000, factor: 2, maxMs: 60_000 }

function claimed(attempts: number, maxAttempts = 3, backoff: JobBackoff | null = null): ClaimedJob {
  return {
    id: '7',
    queue: 'default',
    name: 'resize',
    payload: {},
    state: 'active',
    priority: 0,
    runAt: NOW - 5000,
    attempts,
    maxAttempts,
    timeoutMs: null,
    uniqueKey: null,
    group: null,
    expiresAt: null,
    schedule: null,
    backoff,
    lastError: null,
    result: null,
    workerId: 'w',
    leaseExpiresAt: NOW + 30_000,
    leaseToken: 'token-7',
    createdAt: NOW - 5000,
    updatedAt: NOW - 5000,
    finishedAt: null,
  }
}

function decide(
  outcome: ExecutionOutcome,
  {
    attempts = 1,
    abortCause = null,
    timeoutMs = null,
    backoff = null,
  }: {
    attempts?: number
    abortCause?: AbortCause | null
    timeoutMs?: number | null
    backoff?: JobBackoff | null
  } = {},
) {
  const job = claimed(attempts, 3, backoff)
  return decideSettlement(
    { job, outcome, abortCause, timeoutMs },
    { now: NOW, backoff: BACKOFF, random: lowest },
  )
}

const lease = { id: '7', leaseToken: 'token-7' }
const thrown: JobError = { kind: 'error', message: 'boom', name: 'Error' }

test('a completed attempt is settled as completed with its result', () => {
  assert.deepEqual(decide({ kind: 'completed', result: { width: 80 } }), {
    ...lease,
    kind: 'completed',
    result: { width: 80 },
  })
})

test('a completed attempt without a result is settled as completed', () => {
  assert.deepEqual(decide({ kind: 'completed', result: undefined }), {
    ...lease,
    kind: 'completed',
    result: undefined,
  })
})

test('a result the store cannot take ends the job dead with the reason, since a retry would give it again', () => {
  const settlement = decide({ kind: 'completed', result: { big: 10n } })
  assert.equal(settlement?.kind, 'dead')
  assert.ok(settlement.kind === 'dead')
  assert.equal(settlement.error.kind, 'permanent')
  assert.match(settlement.error.message, /^the handler completed but its result cannot be stored: /)
})

test('a snooze runs the job again after its delay without using the attempt', () => {
  assert.deepEqual(decide({ kind: 'snoozed', delayMs: 2500 }), {
    ...lease,
    kind: 'snoozed',
    runAt: NOW + 2500,
  })
})

test('a permanent failure ends the job dead at once, even with attempts left', () => {
  const error: JobError = { kind: 'permanent', message: 'bad input' }
  assert.deepEqual(decide({ kind: 'permanent', error }, { attempts: 1 }), { ...lease, kind: 'dead', error })
})

test('a failed attempt with attempts left is retried after the backoff of its attempt number', () => {
  assert.deepEqual(decide({ kind: 'failed', error: thrown }, { attempts: 1 }), {
    ...lease,
    kind: 'retry',
    runAt: NOW + 500,
    error: thrown,
  })
  const second = decide({ kind: 'failed', error: thrown }, { attempts: 2 })
  assert.ok(second?.kind === 'retry')
  assert.equal(second.runAt, NOW + 1000)
})

test("a job's own backoff decides its retry time, in place of the worker's", () => {
  const failed: ExecutionOutcome = { kind: 'failed', error: thrown }
  const retryAt = (backoff: JobBackoff, attempts: number) => {
    const settlement = decide(failed, { attempts, backoff })
    assert.ok(settlement?.kind === 'retry')
    return settlement.runAt - NOW
  }
  assert.equal(retryAt({ type: 'fixed', delayMs: 7000 }, 2), 7000)
  const list: JobBackoff = { type: 'list', delaysMs: [10, 20] }
  assert.deepEqual([retryAt(list, 1), retryAt(list, 2)], [10, 20])
  // Exponential keeps the worker's jitter (at its lowest here: half the nominal delay).
  assert.equal(retryAt({ type: 'exponential', baseMs: 100, factor: 3, maxMs: 10_000 }, 2), 150)
})

test('a failed last attempt ends the job dead with its error', () => {
  assert.deepEqual(decide({ kind: 'failed', error: thrown }, { attempts: 3 }), {
    ...lease,
    kind: 'dead',
    error: thrown,
  })
})

test('an attempt aborted by its timeout fails as a timeout, retried while attempts are left', () => {
  const settlement = decide({ kind: 'aborted' }, { abortCause: 'timeout', timeoutMs: 250 })
  assert.deepEqual(settlement, {
    ...lease,
    kind: 'retry',
    runAt: NOW + 500,
    error: { kind: 'timeout', message: 'timed out after 250 ms', timeoutMs: 250 },
  })
  const last = decide({ kind: 'aborted' }, { attempts: 3, abortCause: 'timeout', timeoutMs: 250 })
  assert.equal(last?.kind, 'dead')
})

test("a timeout whose child had to be killed records how, with the child's exit and stderr", () => {
  const killed = {
    message: 'the process running the job was killed by SIGKILL',
    exitCode: null,
    signal: 'SIGKILL',
    stderrTail: 'still looping',
  }
  const settlement = decide({ kind: 'aborted', killed }, { abortCause: 'timeout', timeoutMs: 100 })
  assert.ok(settlement?.kind === 'retry')
  assert.deepEqual(settlement.error, {
    kind: 'timeout',
    message: 'timed out after 100 ms; the process running the job was killed by SIGKILL',
    timeoutMs: 100,
    exitCode: null,
    signal: 'SIGKILL',
    stderrTail: 'still looping',
  })
})

test('an attempt aborted because the lease was lost writes nothing', () => {
  assert.equal(decide({ kind: 'aborted' }, { abortCause: 'lease-lost' }), null)
})

test('an attempt aborted by shutdown goes back to ready now without using the attempt', () => {
  const snoozed = { ...lease, kind: 'snoozed', runAt: NOW }
  assert.deepEqual(decide({ kind: 'aborted' }, { abortCause: 'shutdown' }), snoozed)
  // The executor closing under it aborts it without a cause of the worker's: a shutdown too.
  assert.deepEqual(decide({ kind: 'aborted' }, { abortCause: null }), snoozed)
})
