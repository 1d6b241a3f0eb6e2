import assert from 'node:assert/strict'
import { test } from 'node:test'
import { AUTO_HORIZON_MS, Prefetch } from './prefetch.js'

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

test('auto holds one job per slot while jobs are short', () => {
  const prefetch = new Prefetch('auto', 10)
  for (let i = 0; i < 50; i++) prefetch.jobRan(0.05, i * 0.01)
  assert.equal(prefetch.jobsAhead(0.5), 10)
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
  assert.equal(prefetch.jobsAhead(20), 4)
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
