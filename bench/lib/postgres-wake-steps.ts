/**
 * Where a PostgreSQL wake-up's time goes, step by step, in one process with two stores (so the
 * worker's store is woken by the NOTIFY, not in-process): the enqueue's commit, the notification
 * reaching the waiting store, the worker's stop-request check (stopRequestedAt, which the worker
 * runs after every notified wake), and the claim with its commit. A profile, not a scenario:
 *
 *   npx tsx bench/lib/postgres-wake-steps.ts [samples] ['-c synchronous_commit=off']
 *
 * The second argument is given to the waiting store's connections (PostgreSQL's `options`), e.g.
 * to see what the claim's WAL flush costs.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { normalizeJob } from '../../src/core/validate.js'
import { withBenchSchema } from './postgres.js'
import { percentile } from './stats.js'

const WARMUP = 20
const samples = Number(process.argv[2] ?? 100)
const workerOptions = process.argv[3]
const ms = (): number => Number(process.hrtime.bigint()) / 1e6

await withBenchSchema(async (bench) => {
  const producer = await bench.open()
  const worker = await bench.open(workerOptions === undefined ? {} : { options: workerOptions })
  const claim = { queues: ['default'], limit: 10, leaseMs: 60_000, workerId: 'steps' }
  const steps: Record<string, number[]> = { commit: [], notified: [], 'stop check': [], claim: [], total: [] }
  await worker.claim(claim)
  await worker.stopRequestedAt()
  for (let i = 0; i < WARMUP + samples; i++) {
    const woken = worker.waitForWork({ queues: ['default'] })
    await sleep(5 + Math.random() * 15)
    const job = normalizeJob('bench.steps', { i }, undefined, { maxPayloadBytes: 1 << 20 })
    const t0 = ms()
    const committed = producer.enqueue({ jobs: [job] }).then(() => ms())
    await woken
    const t1 = ms()
    await worker.stopRequestedAt()
    const t2 = ms()
    const [claimed] = await worker.claim(claim)
    const t3 = ms()
    if (claimed === undefined) throw new Error('woken, but nothing to claim')
    const tCommit = await committed
    if (i >= WARMUP) {
      steps.commit!.push(tCommit - t0)
      steps.notified!.push(t1 - t0)
      steps['stop check']!.push(t2 - t1)
      steps.claim!.push(t3 - t2)
      steps.total!.push(t3 - t0)
    }
    await worker.settle({
      settlements: [{ id: claimed.id, leaseToken: claimed.leaseToken, kind: 'completed' }],
    })
  }
  console.log(`${samples} wake-ups; waiting store's options: ${workerOptions ?? 'none'}`)
  for (const [step, values] of Object.entries(steps)) {
    const p50 = percentile(values, 50).toFixed(2)
    const p90 = percentile(values, 90).toFixed(2)
    console.log(`${step.padEnd(11)} p50 ${p50} ms  p90 ${p90} ms`)
  }
})
