import type { SqliteDurability } from '../../src/sqlite.js'
import { sqliteStoreUrl, withChildWorker } from '../lib/child-worker.js'
import { percentile } from '../lib/stats.js'
import { openBenchStore } from '../lib/store.js'
import { withTempDir } from '../lib/temp.js'
import type { Figure, ScenarioDef } from '../lib/types.js'
import { sampleWakes, type WakeSamples } from '../lib/wake-samples.js'

/**
 * Wake-up latency across processes, sampled as on every store (bench/lib/wake-samples.ts): an idle
 * `ferry work` child process and this process enqueuing one job at a time. Run under durability 'full' (both processes), then again under 'normal' for
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

async function measure(samples: number, durability: SqliteDurability): Promise<WakeSamples> {
  return withTempDir('wake-latency', async (dir) => {
    // Created (and migrated) here first, so the child opens an existing store.
    const bench = await openBenchStore(dir, durability)
    try {
      const timeLimitMs = 60_000 + (samples + 2) * 1000
      return await withChildWorker(
        { storeUrl: sqliteStoreUrl(bench.path, durability), timeLimitMs },
        (child) => sampleWakes(child, bench.client, samples),
      )
    } finally {
      await bench.close()
    }
  })
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
