import { setTimeout as sleep } from 'node:timers/promises'
import type { SqliteDurability } from '../../src/sqlite.js'
import { withChildWorker } from '../lib/child-worker.js'
import { percentile } from '../lib/stats.js'
import { openBenchStore, type BenchStore } from '../lib/store.js'
import { withTempDir } from '../lib/temp.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

/** Samples before the counted ones: the first enqueue and claim prepare their statements. */
const WARMUP_SAMPLES = 2
/** After the child says it runs, before the first sample. */
const SETTLE_MS = 500
const GAP_MIN_MS = 5
const GAP_MAX_MS = 20
/** A sample that takes longer is an error, not a figure. */
const SAMPLE_TIMEOUT_MS = 10_000

interface Samples {
  /** client.enqueue() called → handler started, ms. */
  wake: number[]
  /** client.enqueue() called → its promise resolved (the commit is durable), ms. */
  commit: number[]
}

/**
 * Wake-up latency across processes: an idle `ferry work` child process (bench/fixtures/handlers.ts)
 * and this process enqueuing one job at a time with client.enqueue(). The clock is
 * process.hrtime.bigint() on both sides — CLOCK_MONOTONIC, shared by every process on Linux —
 * read here just before client.enqueue() and in the child as the handler's first act (it prints
 * the reading). Each sample waits until the job has started and is completed in the store (the
 * worker is idle again), then 5–20 ms more (random), before the next enqueue. 2 warm-up samples
 * are not counted. Run under durability 'full' (both processes), then again under 'normal' for
 * reference: the difference is the two syncs on the path (the enqueue's commit, the claim's).
 */
export async function wakeLatency(samples: number): Promise<Figure[]> {
  const full = await measure(samples, 'full')
  const normal = await measure(samples, 'normal')
  const figures: Figure[] = []
  for (const [durability, result] of [
    ['full', full],
    ['normal', normal],
  ] as const) {
    const suffix = durability === 'full' ? '' : ' [normal]'
    const prefix = durability === 'full' ? '' : 'normal.'
    const ps = durability === 'full' ? ([50, 99, 100] as const) : ([50, 99] as const)
    for (const p of ps) {
      figures.push({
        key: `${prefix}${p === 100 ? 'max' : `p${p}`}`,
        label: `enqueue → handler start, other process, ${p === 100 ? 'max' : `p${p}`}${suffix}`,
        value: percentile(result.wake, p),
        unit: 'ms',
      })
    }
    figures.push({
      key: `${prefix}commit.p50`,
      label: `of which enqueue → enqueue resolved (durable), p50${suffix}`,
      value: percentile(result.commit, 50),
      unit: 'ms',
    })
  }
  return figures
}

async function measure(samples: number, durability: SqliteDurability): Promise<Samples> {
  return withTempDir('wake-latency', async (dir) => {
    // Created (and migrated) here first, so the child opens an existing store.
    const bench = await openBenchStore(dir, durability)
    try {
      const timeLimitMs = 60_000 + (samples + WARMUP_SAMPLES) * 1000
      return await withChildWorker({ dbPath: bench.path, durability, timeLimitMs }, async (child) => {
        const waiting = new Map<number, (startedNs: bigint) => void>()
        child.onLine((line) => {
          const report = JSON.parse(line) as { seq: number; startedNs: string }
          waiting.get(report.seq)?.(BigInt(report.startedNs))
        })
        await sleep(SETTLE_MS)
        const result: Samples = { wake: [], commit: [] }
        for (let seq = 0; seq < WARMUP_SAMPLES + samples; seq++) {
          child.assertAlive()
          const started = new Promise<bigint>((resolve) => waiting.set(seq, resolve))
          const before = process.hrtime.bigint()
          const { id } = await bench.client.enqueue('bench.wake', { seq })
          const committed = process.hrtime.bigint()
          const startedNs = await withTimeout(started, `job ${seq} did not start`, child)
          waiting.delete(seq)
          if (startedNs <= before) {
            throw new Error(
              `the handler started before the enqueue (${startedNs} ≤ ${before}): clocks differ`,
            )
          }
          if (seq >= WARMUP_SAMPLES) {
            result.wake.push(Number(startedNs - before) / 1e6)
            result.commit.push(Number(committed - before) / 1e6)
          }
          await untilCompleted(bench, id, child)
          await sleep(GAP_MIN_MS + Math.random() * (GAP_MAX_MS - GAP_MIN_MS))
        }
        return result
      })
    } finally {
      await bench.close()
    }
  })
}

async function withTimeout<T>(promise: Promise<T>, what: string, child: { assertAlive(): void }): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      try {
        child.assertAlive()
        reject(new Error(`${what} within ${SAMPLE_TIMEOUT_MS} ms`))
      } catch (error) {
        reject(error as Error)
      }
    }, SAMPLE_TIMEOUT_MS)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** Waits until the worker has settled the job: it is idle again. Polls every millisecond. */
async function untilCompleted(bench: BenchStore, id: string, child: { assertAlive(): void }): Promise<void> {
  const deadline = Date.now() + SAMPLE_TIMEOUT_MS
  for (;;) {
    const job = await bench.store.getJob(id)
    if (job?.state === 'completed') return
    if (job !== null && job.state !== 'active' && job.state !== 'ready') {
      throw new Error(`job ${id} ended ${job.state}: ${JSON.stringify(job.lastError)}`)
    }
    if (Date.now() > deadline) {
      child.assertAlive()
      throw new Error(`job ${id} was not completed within ${SAMPLE_TIMEOUT_MS} ms (state ${job?.state})`)
    }
    await sleep(1)
  }
}

export const wakeLatencyScenario: ScenarioDef = {
  name: 'wake-latency',
  summary:
    'enqueue → handler start in an idle `ferry work` child process, p50/p99/max over 200 jobs, one at a time',
  fullSize: 200,
  quickSize: 10,
  run: wakeLatency,
  targets: { p50: { op: '<', value: 1 }, p99: { op: '<', value: 10 } },
}
