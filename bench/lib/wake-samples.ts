import { setTimeout as sleep } from 'node:timers/promises'
import type { Client } from '../../src/client/client.js'
import type { ChildWorker } from './child-worker.js'
import { within } from '../../tests/support/async.js'
import { getJob } from '../../tests/support/store-calls.js'

/** Samples before the counted ones: the first enqueue and claim prepare their statements. */
const WARMUP_SAMPLES = 2
/** After the child says it runs, before the first sample. */
const SETTLE_MS = 500
/** Between samples (random in this range): long enough for the CPUs to go idle, as between real jobs. */
export const WAKE_GAP = { minMs: 5, maxMs: 20 } as const
/** A sample that takes longer is an error, not a figure. */
const SAMPLE_TIMEOUT_MS = 10_000

export interface WakeSamples {
  /** client.enqueue() called → handler started, ms. */
  wake: number[]
  /** client.enqueue() called → its promise resolved (the commit is durable), ms. */
  commit: number[]
}

/**
 * Wake-up latency across processes, for every store: an idle `ferry work` child (its handler
 * bench.wake prints process.hrtime.bigint() as its first act: bench/fixtures/handlers.ts) and this
 * process enqueuing one job at a time with client.enqueue(), the clock read just before the call.
 * CLOCK_MONOTONIC is shared by every process on Linux. Each sample waits until the job has started
 * and is completed in the store (the worker is idle again), then WAKE_GAP more. 2 warm-up
 * samples are not counted.
 */
export async function sampleWakes(child: ChildWorker, client: Client, samples: number): Promise<WakeSamples> {
  const waiting = new Map<number, (startedNs: bigint) => void>()
  child.onLine((line) => {
    const report = JSON.parse(line) as { seq: number; startedNs: string }
    waiting.get(report.seq)?.(BigInt(report.startedNs))
  })
  await sleep(SETTLE_MS)
  const result: WakeSamples = { wake: [], commit: [] }
  for (let seq = 0; seq < WARMUP_SAMPLES + samples; seq++) {
    child.assertAlive()
    const started = new Promise<bigint>((resolve) => waiting.set(seq, resolve))
    const before = process.hrtime.bigint()
    const { id } = await client.enqueue('bench.wake', { seq })
    const committed = process.hrtime.bigint()
    const startedNs = await withinSample(started, `the start of job ${seq}`, child)
    waiting.delete(seq)
    if (startedNs <= before) {
      throw new Error(`the handler started before the enqueue (${startedNs} ≤ ${before}): clocks differ`)
    }
    if (seq >= WARMUP_SAMPLES) {
      result.wake.push(Number(startedNs - before) / 1e6)
      result.commit.push(Number(committed - before) / 1e6)
    }
    await untilCompleted(client, id, child)
    await sleep(WAKE_GAP.minMs + Math.random() * (WAKE_GAP.maxMs - WAKE_GAP.minMs))
  }
  return result
}

/** The promise's value, or, after SAMPLE_TIMEOUT_MS, why not: the child died, or `what`. */
async function withinSample<T>(promise: Promise<T>, what: string, child: ChildWorker): Promise<T> {
  try {
    return await within(SAMPLE_TIMEOUT_MS, what, promise)
  } catch (error) {
    child.assertAlive()
    throw error
  }
}

/** Waits until the worker has settled the job: it is idle again. Polls every millisecond. */
async function untilCompleted(client: Client, id: string, child: ChildWorker): Promise<void> {
  const deadline = Date.now() + SAMPLE_TIMEOUT_MS
  for (;;) {
    const job = await getJob(client.store, id)
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
