/**
 * Pipelining: when more attempts wait than children are free, a busy child is handed its next
 * job before its current one ends. It still runs one at a time, and a job handed ahead that never
 * started is never failed for what the job before it did.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { AttemptAbort } from '../../src/worker/executors/executor.js'
import { claimedJob } from '../conformance/executor.case.js'
import { completedResult, POOLED, runJob, type Timed } from './pool-helpers.js'

for (const [strategy, pool] of POOLED) {
  describe(`pipelining: ${strategy}`, () => {
    test('a job handed ahead runs in the same child once the one before it has ended', async () => {
      const executor = await pool()
      try {
        const [first, second] = (await Promise.all([
          runJob(executor, 'timed', { ms: 100 }),
          runJob(executor, 'timed', { ms: 10 }),
        ]).then((outcomes) => outcomes.map(completedResult))) as Timed[]
        assert.equal(second!.where, first!.where)
        assert.ok(second!.start >= first!.end, 'one job at a time')
      } finally {
        await executor.close()
      }
    })

    test('a job handed ahead behind one that kills its child runs in another child', async () => {
      const executor = await pool()
      try {
        const before = completedResult(await runJob(executor, 'where'))
        const [crashed, after] = await Promise.all([runJob(executor, 'exits'), runJob(executor, 'where')])
        assert.ok(crashed.kind === 'failed' && crashed.error.exitCode === 3, JSON.stringify(crashed))
        assert.notEqual(completedResult(after), before)
      } finally {
        await executor.close()
      }
    })

    test('a job that kills its child right after the job before it ended fails alone', async () => {
      const executor = await pool()
      try {
        const [first, crashed] = await Promise.all([runJob(executor, 'echo', 1), runJob(executor, 'exits')])
        assert.equal(completedResult(first), 1)
        assert.ok(crashed.kind === 'failed' && crashed.error.exitCode === 3, JSON.stringify(crashed))
      } finally {
        await executor.close()
      }
    })

    test('aborting a job handed ahead ends it unrun and keeps the child', async () => {
      const executor = await pool()
      try {
        const running = runJob(executor, 'timed', { ms: 300 })
        const abort = new AttemptAbort()
        const handedAhead = executor.run({ job: claimedJob('timed', { ms: 10 }), abort })
        setTimeout(() => abort.abort(new Error('cancelled')), 50)
        assert.deepEqual(await handedAhead, { kind: 'aborted' })
        const first = completedResult(await running) as Timed
        const next = completedResult(await runJob(executor, 'timed', { ms: 1 })) as Timed
        assert.equal(next.where, first.where, 'the child is kept')
      } finally {
        await executor.close()
      }
    })

    test('a job handed ahead behind an aborted one is given back and runs in a fresh child', async () => {
      const executor = await pool({ killGraceMs: 2000 })
      try {
        const before = completedResult(await runJob(executor, 'where'))
        const [aborted, after] = await Promise.all([
          runJob(executor, 'honoursAbort', null, 100),
          runJob(executor, 'where'),
        ])
        assert.deepEqual(aborted, { kind: 'aborted' })
        assert.notEqual(completedResult(after), before, 'not in the child of the aborted handler')
      } finally {
        await executor.close()
      }
    })

    test('recycling after maxJobsPerChild stays exact with jobs handed ahead', async () => {
      const executor = await pool({ maxJobsPerChild: 3 })
      try {
        const outcomes = await Promise.all(Array.from({ length: 6 }, () => runJob(executor, 'where')))
        const places = outcomes.map(completedResult)
        assert.equal(new Set(places.slice(0, 3)).size, 1)
        assert.equal(new Set(places.slice(3)).size, 1)
        assert.notEqual(places[0], places[3])
      } finally {
        await executor.close()
      }
    })

    test('a child that falls idle takes back a job handed ahead to a child running a long job', async () => {
      const executor = await pool({ size: 2 })
      try {
        const long = runJob(executor, 'timed', { ms: 1500 })
        const short = runJob(executor, 'timed', { ms: 50 })
        // Both children are busy: this one is handed ahead to the first, behind the long job.
        const third = runJob(executor, 'timed', { ms: 1 })
        const [longResult, shortResult, thirdResult] = (await Promise.all([long, short, third]).then(
          (outcomes) => outcomes.map(completedResult),
        )) as Timed[]
        assert.equal(thirdResult!.where, shortResult!.where)
        assert.ok(thirdResult!.end < longResult!.end, 'it did not wait for the long job')
      } finally {
        await executor.close()
      }
    })
  })
}
