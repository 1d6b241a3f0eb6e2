/**
 * Where a PostgreSQL wake-up's time goes, step by step, in one process with two stores (so the
 * worker's store hears of the job through PostgreSQL, not in-process). Two paths, as a worker
 * takes them:
 * - delivery: the worker waits in waitForJobs, and the enqueue claims the job for it inside its
 *   own transaction; steps: the enqueue's commit, and the job in the worker's hands.
 * - notify: the worker waits in waitForWork and claims once woken, as it does for jobs that no
 *   enqueue of the store delivers (an enqueue in the caller's transaction, a scheduled job coming
 *   due, a retry); steps: the enqueue's commit, the NOTIFY heard, the claim with its commit.
 * A profile, not a scenario:
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
  const queues = ['default']
  const claim = { limit: 10, leaseMs: 60_000, workerId: 'steps' }
  const steps: Record<string, number[]> = {
    'delivery: commit': [],
    'delivery: jobs in hand': [],
    'notify: commit': [],
    'notify: heard': [],
    'notify: claimed': [],
  }
  const record = (i: number, step: string, value: number): void => {
    if (i >= WARMUP) steps[step]!.push(value)
  }
  // Prepares the claim, and opens the listening connection: a first wait that is still opening
  // it when the job is enqueued finds the job already there, and is not handed it.
  await worker.claim({ queues, ...claim })
  await worker.waitForWork({ queues, timeoutMs: 10 })
  for (let i = 0; i < WARMUP + samples; i++) {
    // Alternating, so that both paths see the same moments of a shared machine.
    for (const path of ['delivery', 'notify'] as const) {
      const woken =
        path === 'delivery'
          ? worker.waitForWork({ queues, claim }).then(({ jobs }) => jobs)
          : worker.waitForWork({ queues }).then(() => [])
      await sleep(5 + Math.random() * 15)
      const job = normalizeJob('bench.steps', { i }, undefined, { maxPayloadBytes: 1 << 20 })
      const t0 = ms()
      const committed = producer.enqueue({ jobs: [job] }).then(() => ms())
      let jobs = await woken
      const t1 = ms()
      if (path === 'notify') jobs = await worker.claim({ queues, ...claim })
      const t2 = ms()
      if (jobs.length !== 1) throw new Error(`${path}: ${jobs.length} jobs in hand, not 1`)
      record(i, `${path}: commit`, (await committed) - t0)
      if (path === 'delivery') record(i, 'delivery: jobs in hand', t1 - t0)
      else {
        record(i, 'notify: heard', t1 - t0)
        record(i, 'notify: claimed', t2 - t0)
      }
      await worker.settle({
        settlements: [{ id: jobs[0]!.id, leaseToken: jobs[0]!.leaseToken, kind: 'completed' }],
      })
    }
  }
  console.log(`${samples} wake-ups per path; waiting store's options: ${workerOptions ?? 'none'}`)
  console.log('ms after the enqueue was called:')
  for (const [step, values] of Object.entries(steps)) {
    const p50 = percentile(values, 50).toFixed(2)
    const p90 = percentile(values, 90).toFixed(2)
    console.log(`${step.padEnd(23)} p50 ${p50} ms  p90 ${p90} ms`)
  }
})
