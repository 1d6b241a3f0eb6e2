import { withChildWorker } from '../lib/child-worker.js'
import { BENCH_POSTGRES_URL, withBenchSchema } from '../lib/postgres.js'
import { percentile } from '../lib/stats.js'
import type { Figure, ScenarioDef } from '../lib/types.js'
import { postgresWakeFloor } from '../lib/wake-floor.js'
import { sampleWakes, WAKE_GAP } from '../lib/wake-samples.js'

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
    const { wake, commit } = await withChildWorker({ storeUrl: bench.url, timeLimitMs: 300_000 }, (child) =>
      sampleWakes(child, client, samples),
    )
    const floor = await postgresWakeFloor(BENCH_POSTGRES_URL, bench.schema, samples, WAKE_GAP)
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
