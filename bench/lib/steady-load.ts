import { setTimeout as sleep } from 'node:timers/promises'
import type { Client } from '../../src/client/client.js'
import type { Store } from '../../src/store/store.js'
import { NOOP_JOB } from './noop-jobs.js'
import { payloadOfBytes } from './payload.js'

/** Long enough that no probe's lease runs out while its claim is timed and settled. */
const PROBE_LEASE_MS = 60_000
/** How often the producer looks at the clock to enqueue the jobs due by then. */
const PRODUCER_TICK_MS = 10

export interface SteadyLoadOptions {
  /**
   * Enqueues the offered load: one `client.enqueue` per job, as requests of a busy application
   * would, so the client's group commit batches those of the same tick into one transaction.
   */
  client: Client
  /** A store of the probe's own, whose claims are timed. */
  probeStore: Store
  /** Jobs offered per second, whatever the workers manage: an open loop, like real traffic. */
  ratePerSecond: number
  durationMs: number
  /** The length of a window: every series is reported per window. */
  windowMs: number
  /** The JSON length of each job's payload (bench/lib/payload.ts). */
  payloadBytes: number
  queue?: string
  /** The probe claims one job this often (more rarely if a claim takes longer). Default 50 ms. */
  probeIntervalMs?: number
  /** Called as each window closes, with that window's counts (the scenario samples the table here). */
  onWindow?: (window: LoadWindow) => void | Promise<void>
}

export interface LoadWindow {
  /** 0, 1, 2, …: window i covers [i × windowMs, (i + 1) × windowMs) of the run. */
  index: number
  /** When it closed, in ms since the load started (later than planned if the last onWindow overran). */
  endMs: number
  /** Enqueues offered (called) in this window, and those that resolved in it. */
  offered: number
  enqueued: number
  /** The probe's claim latencies (ms) of the claims that began in this window. */
  claimMs: number[]
  /** How many of those claims found a job (the others found the queue empty). */
  claimsThatFoundAJob: number
}

export interface SteadyLoadResult {
  windows: LoadWindow[]
  /** Every enqueue the producer made, all resolved. */
  enqueued: number
}

/**
 * Offers `ratePerSecond` no-op jobs (NOOP_JOB, so `ferry work --handlers bench/fixtures/handlers.ts`
 * runs them) for `durationMs`, while a probe claims one job every `probeIntervalMs` from its own
 * store and times the call: one claim() statement with its commit, what every claim of a worker
 * costs on this table at this moment, whether or not the queue had a job. A job the probe took is
 * settled as completed at once (untimed). The workers that carry the load are the caller's.
 * Fails on the first enqueue, claim or settle that fails.
 */
export async function runSteadyLoad(options: SteadyLoadOptions): Promise<SteadyLoadResult> {
  const { client, probeStore, ratePerSecond, durationMs, windowMs, payloadBytes } = options
  const queue = options.queue ?? 'default'
  const probeIntervalMs = options.probeIntervalMs ?? 50
  const windowCount = Math.max(1, Math.round(durationMs / windowMs))
  const windows: LoadWindow[] = Array.from({ length: windowCount }, (_, index) => ({
    index,
    endMs: 0,
    offered: 0,
    enqueued: 0,
    claimMs: [],
    claimsThatFoundAJob: 0,
  }))
  const start = performance.now()
  const endAt = start + windowCount * windowMs
  /** The window that time `at` (performance.now()) falls in; the last one takes what runs over. */
  const windowAt = (at: number): LoadWindow =>
    windows[Math.min(windowCount - 1, Math.max(0, Math.floor((at - start) / windowMs)))]!
  let failure: Error | null = null
  const fail = (error: unknown): void => {
    failure ??= error instanceof Error ? error : new Error(String(error))
  }
  const running = (): boolean => failure === null && performance.now() < endAt

  const inFlight = new Set<Promise<unknown>>()
  let offered = 0
  const produce = async (): Promise<void> => {
    while (running()) {
      const due = Math.floor((ratePerSecond * (performance.now() - start)) / 1000) - offered
      for (let i = 0; i < due; i++) {
        const seq = offered++
        windowAt(performance.now()).offered++
        const enqueue = client
          .enqueue(NOOP_JOB, payloadOfBytes(payloadBytes, seq), { queue })
          .then(() => void windowAt(performance.now()).enqueued++, fail)
          .finally(() => inFlight.delete(enqueue))
        inFlight.add(enqueue)
      }
      await sleep(PRODUCER_TICK_MS)
    }
  }

  const probe = async (): Promise<void> => {
    let nextAt = performance.now()
    while (running()) {
      const began = performance.now()
      const jobs = await probeStore.claim({
        queues: [queue],
        limit: 1,
        leaseMs: PROBE_LEASE_MS,
        workerId: 'steady-load-probe',
      })
      const window = windowAt(began)
      window.claimMs.push(performance.now() - began)
      if (jobs.length > 0) {
        window.claimsThatFoundAJob++
        await probeStore.settle({
          settlements: jobs.map((job) => ({ kind: 'completed', id: job.id, leaseToken: job.leaseToken })),
        })
      }
      // A claim that overran its slot is followed by the next at once, not by a burst to catch up.
      nextAt = Math.max(nextAt + probeIntervalMs, performance.now())
      await sleep(nextAt - performance.now())
    }
  }

  const closeWindows = async (): Promise<void> => {
    for (const window of windows) {
      const closesAt = start + (window.index + 1) * windowMs
      while (failure === null && performance.now() < closesAt) await sleep(closesAt - performance.now())
      if (failure !== null) return
      window.endMs = performance.now() - start
      await options.onWindow?.(window)
    }
  }

  await Promise.all([produce().catch(fail), probe().catch(fail), closeWindows().catch(fail)])
  await Promise.allSettled([...inFlight])
  if (failure !== null) throw failure
  return { windows, enqueued: offered }
}
