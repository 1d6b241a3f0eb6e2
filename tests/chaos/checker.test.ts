/**
 * The chaos checker must catch what it claims to catch: each test writes a small history by hand
 * (a clean run, then one broken in one way) and checks the verdict.
 */
import assert from 'node:assert/strict'
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'

import { checkChaosRun, formatReport, readMeta } from '../../chaos/checker.js'
import type { ProducerRecord } from '../../chaos/producer.js'
import type { WorkerRecord } from '../../chaos/recording-store.js'
import type { ChaosMeta, NemesisRecord } from '../../chaos/supervisor.js'
import type { Job } from '../../src/index.js'
import { dumpedJob } from './fixtures.js'

const LEASE = 1000
const T = 1_000_000

interface Scenario {
  nemesis?: NemesisRecord[]
  producers?: Record<string, ProducerRecord[]>
  workers?: Record<string, WorkerRecord[]>
  dump?: Job[]
  meta?: Partial<ChaosMeta>
}

function job(id: string, key: string, overrides: Partial<Job> = {}): Job {
  const fields = { id, queue: 'default', name: 'chaos-sleep', payload: { key, sleepMs: 1 }, uniqueKey: key }
  return dumpedJob(T, { ...fields, ...overrides })
}

const sent = (key: string, i: number, id: string, t = T): ProducerRecord[] => [
  { e: 'send', key, i, t },
  { e: 'ack', key, i, id, created: true, t: t + 5 },
]
const start = (id: string, token: string, attempt: number, t: number): WorkerRecord => ({
  e: 'start',
  id,
  token,
  attempt,
  maxAttempts: 25,
  leaseUntil: t + LEASE,
  t0: t,
  t1: t + 2,
})
const settle = (
  id: string,
  token: string,
  t: number,
  result: 'ok' | 'lease_lost' | 'locked' = 'ok',
): WorkerRecord => ({
  e: 'settle',
  id,
  token,
  kind: 'completed',
  result,
  t0: t,
  t1: t + 2,
})
const hello = (pid: number): WorkerRecord => ({ e: 'hello', pid, workerId: `w:${pid}`, t: T - 100 })

/** Writes the scenario as a chaos run's directory and checks it. */
function check(t: TestContext, scenario: Scenario): ReturnType<typeof checkChaosRun> {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-chaos-check-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const meta: ChaosMeta = {
    store: 'test',
    seed: 1,
    durationMs: 10_000,
    leaseMs: LEASE,
    freezeMs: 2500,
    recoverIntervalMs: 250,
    producers: 1,
    workers: 2,
    concurrency: 4,
    startedAt: T - 1000,
    faultsEndedAt: T + 10_000,
    drainedAt: T + 11_000,
    drained: true,
    stoppedAt: T + 12_000,
    ...scenario.meta,
  }
  const lines = (records: readonly object[]): string => records.map((r) => `${JSON.stringify(r)}\n`).join('')
  writeFileSync(join(dir, 'meta.json'), JSON.stringify(meta))
  writeFileSync(join(dir, 'nemesis.ndjson'), lines(scenario.nemesis ?? []))
  for (const [name, records] of Object.entries(scenario.producers ?? {})) {
    writeFileSync(join(dir, `producer-${name}.ndjson`), lines(records))
  }
  for (const [name, records] of Object.entries(scenario.workers ?? {})) {
    writeFileSync(join(dir, `worker-${name}.ndjson`), lines(records))
  }
  writeFileSync(join(dir, 'dump.ndjson'), lines(scenario.dump ?? []))
  const result = checkChaosRun(dir)
  assert.match(formatReport(readMeta(dir), result), /^verdict: (PASS|FAIL)/m)
  return result
}

const clean = (): Scenario => ({
  producers: { 'p1#001': [...sent('p1-0', 0, '1'), ...sent('p1-1', 1, '2')] },
  workers: {
    'w1#001': [hello(10), start('1', 'a', 1, T), settle('1', 'a', T + 20)],
    'w2#001': [hello(11), start('2', 'b', 1, T + 30), settle('2', 'b', T + 50)],
  },
  dump: [job('1', 'p1-0'), job('2', 'p1-1')],
})

test('a run where every invariant held passes, with its counts', (t) => {
  const { counts, violations } = check(t, clean())
  assert.deepEqual(violations, [])
  assert.equal(counts.acknowledged, 2)
  assert.equal(counts.completed, 2)
  assert.equal(counts.runs, 2)
  assert.equal(counts.duplicates, 0)
})

test('an acknowledged job missing from the store is a loss', (t) => {
  const scenario = clean()
  scenario.dump = [job('1', 'p1-0')]
  const { violations } = check(t, scenario)
  assert.ok(
    violations.some((v) => v.startsWith('loss: acknowledged job 2 (key p1-1)')),
    violations.join('\n'),
  )
})

test('two jobs with one unique key, or one key acknowledged as two jobs, break uniqueness', (t) => {
  const scenario = clean()
  scenario.dump!.push(job('3', 'p1-0'))
  scenario.producers!['p1#002'] = sent('p1-1', 1, '4')
  const { violations } = check(t, scenario)
  assert.ok(
    violations.some((v) => v.startsWith('unique: key p1-0 has 2 jobs')),
    violations.join('\n'),
  )
  assert.ok(violations.some((v) => v.startsWith('unique: key p1-1 was acknowledged as different jobs')))
})

test('a second claim answered while the first lease was still valid is an overlap', (t) => {
  const scenario = clean()
  // Worker w1 renewed at T+300 (valid until ≥ T+1300); w2 claims the job at T+800.
  scenario.workers = {
    'w1#001': [
      hello(10),
      start('1', 'a', 1, T),
      { e: 'renew', id: '1', token: 'a', result: 'ok', t0: T + 300, t1: T + 301 },
    ],
    'w2#001': [
      hello(11),
      start('2', 'b', 1, T),
      settle('2', 'b', T + 5),
      start('1', 'c', 2, T + 800),
      settle('1', 'c', T + 900),
    ],
  }
  scenario.nemesis = [{ e: 'kill', role: 'worker', name: 'w1', pid: 10, t: T + 400 }]
  scenario.dump![0]!.attempts = 2
  const { violations } = check(t, scenario)
  assert.ok(
    violations.some((v) => v.startsWith('overlap: job 1: attempt 2')),
    violations.join('\n'),
  )
})

test('a claim after the lease ran out, following a kill, passes and counts as a duplicate after a kill', (t) => {
  const scenario = clean()
  scenario.workers!['w1#001'] = [hello(10), start('1', 'a', 1, T)]
  scenario.workers!['w2#001'] = [
    hello(11),
    start('2', 'b', 1, T + 30),
    settle('2', 'b', T + 50),
    start('1', 'c', 2, T + 1500),
    settle('1', 'c', T + 1600),
  ]
  scenario.nemesis = [{ e: 'kill', role: 'worker', name: 'w1', pid: 10, t: T + 40 }]
  scenario.dump![0]!.attempts = 2
  const { counts, violations } = check(t, scenario)
  assert.deepEqual(violations, [])
  assert.equal(counts.duplicates, 1)
  assert.equal(counts.duplicatesAfterKill, 1)
  assert.equal(counts.workerKills, 1)
})

test('a run begun after a SIGKILL was sent, before the process died of it, is explained by the kill', (t) => {
  const scenario = clean()
  // The kill is sent at T + 40 and takes effect at T + 60: the claim at T + 48 came in between.
  scenario.workers!['w1#001'] = [
    hello(10),
    start('2', 'b', 1, T),
    settle('2', 'b', T + 30),
    start('1', 'a', 1, T + 48),
  ]
  scenario.workers!['w2#001'] = [hello(11), start('1', 'c', 2, T + 1500), settle('1', 'c', T + 1600)]
  scenario.nemesis = [
    { e: 'kill', role: 'worker', name: 'w1', pid: 10, t: T + 40 },
    {
      e: 'exit',
      role: 'worker',
      name: 'w1',
      incarnation: 1,
      pid: 10,
      code: null,
      signal: 'SIGKILL',
      expected: true,
      t: T + 60,
    },
  ]
  scenario.dump![0]!.attempts = 2
  const { counts, violations } = check(t, scenario)
  assert.deepEqual(violations, [])
  assert.equal(counts.duplicatesAfterKill, 1)
})

test('a settle answered locked wrote nothing: a kill after it still explains the next run', (t) => {
  const scenario = clean()
  scenario.workers!['w1#001'] = [hello(10), start('1', 'a', 1, T), settle('1', 'a', T + 20, 'locked')]
  scenario.workers!['w2#001'] = [
    hello(11),
    start('2', 'b', 1, T + 30),
    settle('2', 'b', T + 50),
    start('1', 'c', 2, T + 1500),
    settle('1', 'c', T + 1600),
  ]
  scenario.nemesis = [{ e: 'kill', role: 'worker', name: 'w1', pid: 10, t: T + 40 }]
  scenario.dump![0]!.attempts = 2
  const { counts, violations } = check(t, scenario)
  assert.deepEqual(violations, [])
  assert.equal(counts.duplicatesAfterKill, 1)
})

test('a completed job whose run was killed after a settle answered locked passes: the retry went unrecorded', (t) => {
  const scenario = clean()
  scenario.workers!['w1#001'] = [hello(10), start('1', 'a', 1, T), settle('1', 'a', T + 20, 'locked')]
  scenario.nemesis = [{ e: 'kill', role: 'worker', name: 'w1', pid: 10, t: T + 40 }]
  const { violations } = check(t, scenario)
  assert.deepEqual(violations, [])
})

test('a settle with a replaced lease that the store accepted breaks fencing', (t) => {
  const scenario = clean()
  scenario.workers!['w1#001'] = [hello(10), start('1', 'a', 1, T), settle('1', 'a', T + 3000)]
  scenario.workers!['w2#001'] = [
    hello(11),
    start('2', 'b', 1, T + 30),
    settle('2', 'b', T + 50),
    start('1', 'c', 2, T + 2000),
    settle('1', 'c', T + 2100, 'lease_lost'),
  ]
  scenario.nemesis = [
    { e: 'freeze', name: 'w1', pid: 10, t: T + 100 },
    { e: 'thaw', name: 'w1', pid: 10, t: T + 2900 },
  ]
  scenario.dump![0]!.attempts = 2
  const { violations } = check(t, scenario)
  assert.ok(
    violations.some((v) => v.startsWith('fencing: job 1: a settle (completed) of replaced attempt 1')),
    violations.join('\n'),
  )
})

test('a second run with no kill, freeze or lost lease behind it is unexplained', (t) => {
  const scenario = clean()
  scenario.workers!['w1#001'] = [hello(10), start('1', 'a', 1, T)]
  scenario.workers!['w2#001'] = [
    hello(11),
    start('2', 'b', 1, T + 30),
    settle('2', 'b', T + 50),
    start('1', 'c', 2, T + 5000),
    settle('1', 'c', T + 5100),
  ]
  scenario.dump![0]!.attempts = 2
  const { violations } = check(t, scenario)
  assert.ok(
    violations.some((v) => v.startsWith('duplicate: job 1: run 2')),
    violations.join('\n'),
  )
  assert.ok(violations.some((v) => v.includes('never ended, and its worker was not killed')))
})

test('attempts past the maximum, a job left active and a worker that died by itself are violations', (t) => {
  const scenario = clean()
  scenario.dump![0]!.attempts = 30
  scenario.dump![1]!.state = 'active'
  scenario.nemesis = [
    {
      e: 'exit',
      role: 'worker',
      name: 'w2',
      incarnation: 1,
      pid: 11,
      code: 1,
      signal: null,
      expected: false,
      t: T + 60,
    },
  ]
  scenario.meta = { drained: false }
  const { violations } = check(t, scenario)
  for (const prefix of [
    'attempts: job 1 used 30 attempts of 25',
    'final: job 2 ended active',
    'crash: worker w2#1',
    'drain:',
  ]) {
    assert.ok(
      violations.some((v) => v.startsWith(prefix)),
      `expected "${prefix}" in:\n${violations.join('\n')}`,
    )
  }
})

test('a torn last line, cut by a SIGKILL while it was written, is skipped', (t) => {
  const scenario = clean()
  const result = check(t, scenario)
  assert.deepEqual(result.violations, [])
  const dir = mkdtempSync(join(tmpdir(), 'ferry-chaos-check-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(
    join(dir, 'meta.json'),
    JSON.stringify({ ...readMetaOf(result), leaseMs: LEASE, drained: true, concurrency: 4 }),
  )
  writeFileSync(join(dir, 'nemesis.ndjson'), '')
  writeFileSync(
    join(dir, 'producer-p1#001.ndjson'),
    sent('p1-0', 0, '1')
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  )
  appendFileSync(join(dir, 'producer-p1#001.ndjson'), '{"e":"ack","key":"p1-1","i":1,"id"')
  writeFileSync(
    join(dir, 'worker-w1#001.ndjson'),
    [hello(10), start('1', 'a', 1, T), settle('1', 'a', T + 5)].map((r) => JSON.stringify(r)).join('\n') +
      '\n',
  )
  writeFileSync(join(dir, 'dump.ndjson'), `${JSON.stringify(job('1', 'p1-0'))}\n`)
  const torn = checkChaosRun(dir)
  assert.deepEqual(torn.violations, [])
  assert.equal(torn.counts.acknowledged, 1)
})

function readMetaOf(_: unknown): Partial<ChaosMeta> {
  return { store: 'test', seed: 1, durationMs: 1, startedAt: T, faultsEndedAt: T, drainedAt: T, stoppedAt: T }
}
