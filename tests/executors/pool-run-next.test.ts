/**
 * runNext: the worker hands its next job for a slot to a busy child before the running job ends,
 * so the child starts it the moment it sent the outcome before it. The worker hears that it
 * started (onStart) before it hears that outcome; a job that never started comes back as null for
 * the worker to place (recalled, aborted, past its start deadline, or its child died first).
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { monotonicMs } from '../../src/core/monotonic.js'
import { AttemptAbort, type ExecutionOutcome } from '../../src/worker/executors/executor.js'
import { HAND_AHEAD_MAX, type ChildPool } from '../../src/worker/executors/pool/child-pool.js'
import { claimedJob } from '../conformance/executor.case.js'
import { completedResult, POOLED, runJob, type Timed } from './pool-helpers.js'

interface HandedOver {
  outcome: Promise<ExecutionOutcome | null> | null
  abort: AttemptAbort
  recall: AttemptAbort
  started: () => boolean
}

function handOver(executor: ChildPool, name: string, payload: unknown, startBy = Infinity): HandedOver {
  const abort = new AttemptAbort()
  const recall = new AttemptAbort()
  let started = false
  const outcome = executor.runNext({
    job: claimedJob(name, payload),
    abort,
    recall,
    startBy,
    onStart: () => (started = true),
  })
  return { outcome, abort, recall, started: () => started }
}

for (const [strategy, pool] of POOLED) {
  describe(`runNext: ${strategy}`, () => {
    test('starts in the busy child once the job before it ended, and says so before that outcome', async (t) => {
      const executor = await pool()
      t.after(() => executor.close())
      const running = runJob(executor, 'timed', { ms: 100 })
      const next = handOver(executor, 'timed', { ms: 10 })
      assert.ok(next.outcome !== null)
      const first = completedResult(await running) as Timed
      assert.equal(next.started(), true)
      const second = completedResult((await next.outcome)!) as Timed
      assert.equal(second.where, first.where)
      assert.ok(second.start >= first.end, 'one job at a time')
    })

    test('takes nothing without a busy child to queue it in, nor past HAND_AHEAD_MAX in it; those it took run in order', async (t) => {
      const executor = await pool()
      t.after(() => executor.close())
      assert.equal(handOver(executor, 'where', null).outcome, null, 'no child is busy')
      const running = runJob(executor, 'timed', { ms: 100 })
      const ahead = Array.from({ length: HAND_AHEAD_MAX }, (_, i) =>
        handOver(executor, 'timed', { ms: 1, i }),
      )
      assert.ok(ahead.every((next) => next.outcome !== null))
      assert.equal(
        handOver(executor, 'where', null).outcome,
        null,
        `at most ${HAND_AHEAD_MAX} ahead per child`,
      )
      const first = completedResult(await running) as Timed
      let end = first.end
      for (const next of ahead) {
        const done = completedResult((await next.outcome)!) as Timed
        assert.equal(done.where, first.where, 'in the child they were handed to')
        assert.ok(done.start >= end, 'one job at a time, in the order handed')
        end = done.end
      }
    })

    test('one still waiting when its start deadline has passed comes back unstarted, and the child goes on', async (t) => {
      const executor = await pool()
      t.after(() => executor.close())
      const running = runJob(executor, 'timed', { ms: 200 })
      const next = handOver(executor, 'where', null, monotonicMs() + 50)
      const first = completedResult(await running) as Timed
      assert.equal(await next.outcome, null)
      assert.equal(next.started(), false)
      assert.equal(completedResult(await runJob(executor, 'where')), first.where)
    })

    for (const how of ['recall', 'abort'] as const) {
      test(`${how === 'recall' ? 'recalled' : 'aborted'} before it started, it comes back unstarted; the running job is not disturbed`, async (t) => {
        const executor = await pool()
        t.after(() => executor.close())
        const running = runJob(executor, 'timed', { ms: 200 })
        const next = handOver(executor, 'where', null)
        setTimeout(() => next[how].abort(new Error(how)), 50)
        assert.equal(await next.outcome, null)
        assert.equal(next.started(), false)
        completedResult(await running)
      })
    }

    test('behind a job that kills its child, it comes back unstarted', async (t) => {
      const executor = await pool()
      t.after(() => executor.close())
      const crashed = runJob(executor, 'exits')
      const next = handOver(executor, 'where', null)
      const outcome = await crashed
      assert.ok(outcome.kind === 'failed' && outcome.error.exitCode === 3, JSON.stringify(outcome))
      assert.equal(await next.outcome, null)
      assert.equal(next.started(), false)
    })
  })
}
