import assert from 'node:assert/strict'
import { test } from 'node:test'
import { AUTO_HORIZON_MS, AUTO_MOST_AHEAD, Prefetch } from './prefetch.js'

test('a fixed prefetch is what the user set, whatever the jobs do', () => {
  const prefetch = new Prefetch(3, 10)
  assert.equal(prefetch.jobsAhead(0), 3)
  prefetch.jobRan(60_000, 0)
  assert.equal(prefetch.jobsAhead(1), 3)
  assert.equal(new Prefetch(0, 10).jobsAhead(), 0)
})

test('auto holds nothing before a job has run', () => {
  assert.equal(new Prefetch('auto', 10).jobsAhead(0), 0)
})

test('auto holds AUTO_MOST_AHEAD jobs while jobs are short, or one per slot when there are more slots', () => {
  for (const [concurrency, most] of [
    [1, AUTO_MOST_AHEAD],
    [10, Math.max(10, AUTO_MOST_AHEAD)],
    [50, 50],
  ] as const) {
    const prefetch = new Prefetch('auto', concurrency)
    for (let i = 0; i < 50; i++) prefetch.jobRan(0.05, i * 0.01)
    assert.equal(prefetch.jobsAhead(0.5), most, `concurrency ${concurrency}`)
  }
})

test('auto at concurrency 1 holds only the jobs that start within the horizon', () => {
  const prefetch = new Prefetch('auto', 1)
  prefetch.jobRan(5, 1000)
  assert.equal(prefetch.jobsAhead(1000), 4) // one starts every 5 ms: four within 20 ms
})

test('auto holds as many as start within the horizon: fewer as jobs get longer, none for long ones', () => {
  const mean = (runMs: number) => {
    const prefetch = new Prefetch('auto', 10)
    prefetch.jobRan(runMs, 1000)
    return prefetch.jobsAhead(1000)
  }
  assert.equal(mean(AUTO_HORIZON_MS), 10)
  assert.equal(mean(AUTO_HORIZON_MS * 4), 2) // a slot frees every 8 ms: two start within 20 ms
  assert.equal(mean(AUTO_HORIZON_MS * 10), 1)
  assert.equal(mean(1000), 0)
})

test('auto holds nothing while no slot has freed within the horizon, even after short jobs', () => {
  const prefetch = new Prefetch('auto', 4)
  for (let i = 0; i < 20; i++) prefetch.jobRan(1, i)
  assert.equal(prefetch.jobsAhead(20), AUTO_MOST_AHEAD)
  assert.equal(prefetch.jobsAhead(19 + AUTO_HORIZON_MS + 1), 0)
})

test('auto follows the recent runs: a long job stops the holding until short ones bring the mean down', () => {
  const prefetch = new Prefetch('auto', 10)
  let at = 0
  for (let i = 0; i < 20; i++) prefetch.jobRan(1, (at += 1))
  prefetch.jobRan(5000, (at += 1))
  assert.equal(prefetch.jobsAhead(at), 0)
  for (let i = 0; i < 60; i++) prefetch.jobRan(1, (at += 1))
  assert.equal(prefetch.jobsAhead(at), 10)
})
