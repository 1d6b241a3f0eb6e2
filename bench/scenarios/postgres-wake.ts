import { setTimeout as sleep } from 'node:timers/promises'
import { BENCH_POSTGRES_URL, startPostgresWorker, withBenchSchema } from '../lib/postgres.js'
import { percentile } from '../lib/stats.js'
import type { Figure, ScenarioDef } from '../lib/types.js'
import { postgresWakeFloor } from '../lib/wake-floor.js'

const WARMUP_SAMPLES = 2
const SETTLE_MS = 500
const GAP_MIN_MS = 5
const GAP_MAX_MS = 20
const SAMPLE_TIMEOUT_MS = 10_000

/**
 * Wake-up latency across processes on PostgreSQL, as wake-latency measures it on SQLite: an idle
 * `ferry work` child (handler bench.wake prints process.hrtime.bigint() as its first act) and this
 * process enqueuing one job at a time with client.enqueue(), the clock read just before the call.
 * The path: the enqueue's commit, NOTIFY to the child's listening connection, its claim, the
 * handler. Each sample waits until the job is completed in the store, then 5–20 ms more. Then the
 * floor (bench/lib/wake-floor.ts): what a bare committed INSERT and its NOTIFY cost with the same
 * gaps, which no wake-up can beat.
 */
export async function postgresWake(samples: number): Promise<Figure[]> {
  return withBenchSchema(async (bench) => {
    const client = await bench.client()
    const worker = await startPostgresWorker(bench.url)
    const wake: number[] = []
    const commit: number[] = []
    try {
      const waiting = new Map<number, (startedNs: bigint) => void>()
      worker.onLine((line) => {
        const report = JSON.parse(line) as { seq: number; startedNs: string }
        waiting.get(report.seq)?.(BigInt(report.startedNs))
      })
      await sleep(SETTLE_MS)
      for (let seq = 0; seq < WARMUP_SAMPLES + samples; seq++) {
        worker.assertAlive()
        const started = new Promise<bigint>((resolve) => waiting.set(seq, resolve))
        const t0 = process.hrtime.bigint()
        const { id } = await client.enqueue('bench.wake', { seq })
        const committedNs = process.hrtime.bigint()
        let timer: NodeJS.Timeout | undefined
        const startedNs = await Promise.race([
          started,
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`sample ${seq}: no start in 10 s`)), SAMPLE_TIMEOUT_MS)
          }),
        ]).finally(() => clearTimeout(timer))
        waiting.delete(seq)
        if (seq >= WARMUP_SAMPLES) {
          wake.push(Number(startedNs - t0) / 1e6)
          commit.push(Number(committedNs - t0) / 1e6)
        }
        while ((await client.store.getJob(id))?.state !== 'completed') await sleep(1)
        await sleep(GAP_MIN_MS + Math.random() * (GAP_MAX_MS - GAP_MIN_MS))
      }
    } finally {
      await worker.stop()
    }
    const floor = await postgresWakeFloor(BENCH_POSTGRES_URL, bench.schema, samples, {
      minMs: GAP_MIN_MS,
      maxMs: GAP_MAX_MS,
    })
    return [
      {
        key: 'p50',
        label: 'enqueue → handler start, other process, p50 [postgres]',
        value: percentile(wake, 50),
        unit: 'ms',
      },
      {
        key: 'p99',
        label: 'enqueue → handler start, other process, p99 [postgres]',
        value: percentile(wake, 99),
        unit: 'ms',
      },
      {
        key: 'max',
        label: 'enqueue → handler start, other process, max [postgres]',
        value: percentile(wake, 100),
        unit: 'ms',
      },
      {
        key: 'commit.p50',
        label: 'of which enqueue → enqueue resolved (committed), p50 [postgres]',
        value: percentile(commit, 50),
        unit: 'ms',
      },
      {
        key: 'floor.p50',
        label:
          'floor: an INSERT + NOTIFY (committed) → heard on another connection, same gaps, p50 [postgres]',
        value: percentile(floor, 50),
        unit: 'ms',
      },
    ]
  })
}

export const postgresWakeScenario: ScenarioDef = {
  name: 'postgres-wake',
  store: 'postgres',
  summary: 'PostgreSQL: enqueue in one process → handler start in an idle ferry work process (LISTEN/NOTIFY)',
  fullSize: 200,
  quickSize: 5,
  run: postgresWake,
  targets: { p50: { op: '<', value: 1.5 }, p99: { op: '<', value: 10 } },
}
