import type { Client, JobSpec } from '../../src/client/client.js'
import type { Store } from '../../src/store/store.js'
import { wrapStore } from '../../src/store/wrap-store.js'
import { Worker } from '../../src/worker/worker.js'
import { FRESH_STORES as STORES, scenariosPerStore } from '../lib/fresh-stores.js'
import { enqueueNoops, NOOP_JOB } from '../lib/noop-jobs.js'
import { secondsSince } from '../lib/stats.js'
import type { BenchStoreKind, Figure } from '../lib/types.js'

/** The queue of the finished jobs the sweep deletes: a retention of 0, so all are past it. */
const OLD = 'bench-old'
const SETUP_CHUNK = 1000
const fmt = (n: number): string => n.toLocaleString('en-US')

/**
 * What one phase measured: the jobs the worker completed over `seconds` (the phase, or less when
 * it ran out of ready jobs first), the phase's own length, and its longest claim.
 */
interface Phase {
  completed: number
  seconds: number
  phaseSeconds: number
  longestClaimMs: number
}

/**
 * What the retention sweep costs a busy worker. Each store gets `size` completed jobs in a queue
 * with a retention of 0 (all past it: what lowering a retention, or a day's backlog, leaves) and
 * `size` ready no-op jobs in 'default'. With the sweep: one in-process Worker (concurrency 10,
 * its own sweeper off) runs no-op jobs while Worker.pruneOnce() deletes the `size` finished jobs,
 * as every worker's sweeper does (batches of 1,000, a pause between two); the phase ends with the
 * sweep. Without: a fresh store with the same jobs, the same worker for as long, and no sweep.
 * Figures: the worker's no-op jobs per second in each phase, the sweep's deletes per second, and
 * the longest claim of each phase (a claim call, or a settle that carries one: what a sweep's
 * batch could make a worker wait for).
 */
function retention(kind: BenchStoreKind): (size: number) => Promise<Figure[]> {
  return async (size) => {
    let swept: Phase & { deleted: number } = {
      completed: 0,
      seconds: 0,
      phaseSeconds: 0,
      longestClaimMs: 0,
      deleted: 0,
    }
    await STORES[kind]((fresh) =>
      fresh(async ({ store, client }) => {
        await prepare(store, client, size)
        swept = await runWorker(store, size, async (worker) => (await worker.pruneOnce()).deleted)
        return undefined
      }),
    )
    if (swept.deleted !== size) throw new Error(`the sweep deleted ${swept.deleted} of ${size} jobs`)
    const idle = await STORES[kind]((fresh) =>
      fresh(async ({ store, client }) => {
        await prepare(store, client, size)
        return runWorker(store, size, () => sleep(swept.phaseSeconds * 1000))
      }),
    )
    return [
      {
        key: 'worker.no_sweep.jobs_per_s',
        label: `no-op jobs, concurrency 10, ${fmt(size)} finished jobs kept, no sweep`,
        value: idle.completed / idle.seconds,
        unit: '/s',
      },
      {
        key: 'worker.sweep.jobs_per_s',
        label: `no-op jobs, concurrency 10, while a sweep deletes ${fmt(size)} finished jobs`,
        value: swept.completed / swept.seconds,
        unit: '/s',
      },
      {
        key: 'sweep.deleted_per_s',
        label: `the sweep: finished jobs deleted per second (${fmt(size)} in batches of 1,000)`,
        value: swept.deleted / swept.phaseSeconds,
        unit: '/s',
      },
      {
        key: 'claim.no_sweep.max_ms',
        label: 'longest claim, no sweep',
        value: idle.longestClaimMs,
        unit: 'ms',
      },
      {
        key: 'claim.sweep.max_ms',
        label: 'longest claim while the sweep runs',
        value: swept.longestClaimMs,
        unit: 'ms',
      },
    ]
  }
}

/** `size` completed jobs of OLD (all past its retention of 0) and `size` ready no-op jobs. */
async function prepare(store: Store, client: Client, size: number): Promise<void> {
  await store.control({ retention: { queue: OLD, completedMs: 0 } })
  for (let first = 0; first < size; first += SETUP_CHUNK) {
    const count = Math.min(SETUP_CHUNK, size - first)
    const specs: JobSpec[] = Array.from({ length: count }, (_, i) => ({
      name: NOOP_JOB,
      payload: { seq: first + i },
      options: { queue: OLD },
    }))
    await client.enqueueMany(specs)
    const claimed = await store.claim({ queues: [OLD], limit: count, leaseMs: 600_000, workerId: 'bench' })
    const { settled } = await store.settle({
      settlements: claimed.map((job) => ({
        kind: 'completed' as const,
        id: job.id,
        leaseToken: job.leaseToken,
        result: null,
      })),
    })
    if (settled.some((result) => result !== 'ok')) throw new Error('a set-up job did not complete')
  }
  await enqueueNoops(client, size)
}

/**
 * Runs no-op jobs through one Worker while `during` runs (its sweeper off: `during` sweeps, or
 * not), and stops it when `during` ends. A worker that runs out of ready jobs first is measured
 * up to its last job (a paced sweep of a large backlog may outlast them).
 */
async function runWorker<T>(
  store: Store,
  ready: number,
  during: (worker: Worker) => Promise<T>,
): Promise<Phase & { deleted: T }> {
  let longestClaimMs = 0
  const timed = wrapStore(store, {
    async around(call) {
      const carriesClaim =
        call.method === 'claim' || (call.method === 'settle' && call.params.claim !== undefined)
      if (!carriesClaim) return call.next()
      const start = process.hrtime.bigint()
      try {
        return await call.next()
      } finally {
        longestClaimMs = Math.max(longestClaimMs, secondsSince(start) * 1000)
      }
    },
  })
  const worker = new Worker({
    store: timed,
    handlers: { [NOOP_JOB]: async () => {} },
    queues: ['default'],
    concurrency: 10,
    retention: false,
  })
  let completed = 0
  let ranOutAt: bigint | null = null
  let failure: unknown = null
  worker.on('job:completed', () => {
    if (++completed === ready) ranOutAt = process.hrtime.bigint()
  })
  worker.on('worker:error', (error) => (failure ??= error))
  const start = process.hrtime.bigint()
  let deleted: T
  try {
    await worker.start()
    deleted = await during(worker)
  } finally {
    await worker.stop({ graceful: false })
  }
  const phaseSeconds = secondsSince(start)
  if (failure !== null) throw failure
  const seconds = ranOutAt === null ? phaseSeconds : Number(ranOutAt - start) / 1e9
  return { completed, seconds, phaseSeconds, longestClaimMs, deleted }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

const scenarios = scenariosPerStore(
  'retention',
  "no-op jobs at concurrency 10 with and without a retention sweep deleting finished jobs, the sweep's rate and the longest claim",
  { fullSize: 1_000_000, quickSize: 2_000 },
  retention,
)
export const retentionScenario = scenarios.sqlite
export const postgresRetentionScenario = scenarios.postgres
export const redisRetentionScenario = scenarios.redis
