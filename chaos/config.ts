/**
 * The shape of a chaos run (docs/reliability.md): the numbers the supervisor, the processes and
 * the checker share.
 */
import type { PrefetchSetting } from '../src/worker/prefetch.js'
import { deriveSeed, Random } from './random.js'

export const QUEUES = ['critical', 'default', 'bulk'] as const
export const PRODUCER_COUNT = 3
export const WORKER_COUNT = 4
export const WORKER_CONCURRENCY = 4
/** The workers' prefetch: the default, as users run it. */
export const WORKER_PREFETCH: PrefetchSetting = 'auto'
/** Short, so recovery happens many times in a run; renewed every third of it. */
export const LEASE_MS = 1000
/** How often each worker sweeps for expired leases. */
export const RECOVER_INTERVAL_MS = 250
/**
 * The drain fails once no job has finished for this long: the workers stopped consuming. Not a
 * deadline on the whole drain, which would fail long runs: their backlog grows with their length.
 */
export const DRAIN_NO_PROGRESS_MS = 30_000
/** A frozen worker stays frozen this long: well past its lease, so its jobs are recovered meanwhile. */
export const FREEZE_MS = 2500
/**
 * Each producer keeps this many enqueues in flight, pausing ENQUEUE_INTERVAL_MS after each: the
 * workers are kept busy, so a frozen worker holds leases. Together the producers outpace the 16
 * slots (about 200 jobs/s against about 125/s for the handlers' mean sleep of 127 ms: a 120 s run
 * on Redis enqueued 24,365 jobs), so a backlog builds up during the faults and the drain works it
 * off, for longer the longer the run.
 */
export const ENQUEUES_IN_FLIGHT = 4
export const ENQUEUE_INTERVAL_MS = 50
/** A restarted producer re-sends this many of its last acknowledged keys (idempotent enqueue). */
export const RESEND_COUNT = 5
export const JOB_NAME = 'chaos-sleep'

export interface ChaosPayload {
  key: string
  sleepMs: number
}

export interface ChaosJob {
  queue: (typeof QUEUES)[number]
  payload: ChaosPayload
}

/**
 * The i-th job of a producer: the same for every incarnation, so a re-sent key carries the same
 * job. Queues take 20/50/30 % of the jobs; handlers sleep 0–20 ms (80 %), 50–200 ms (15 %) or
 * 1–3 s (5 %: past the lease, so they live on renewals).
 */
export function chaosJob(seed: number, producer: string, index: number): ChaosJob {
  const random = new Random(deriveSeed(seed, producer, index))
  const q = random.next()
  const queue = q < 0.2 ? 'critical' : q < 0.7 ? 'default' : 'bulk'
  const s = random.next()
  const sleepMs = Math.round(
    s < 0.8 ? random.between(0, 20) : s < 0.95 ? random.between(50, 200) : random.between(1000, 3000),
  )
  return { queue, payload: { key: `${producer}-${index}`, sleepMs } }
}
