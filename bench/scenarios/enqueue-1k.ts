import { measureConcurrentEnqueue } from '../lib/concurrent-enqueue.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

/**
 * `size` enqueues issued at once (the Symfony report: 1,000 enqueues to SQLite on disk took 68 s).
 * The report gives no payload size: this uses the same 520 bytes as the other enqueue scenarios.
 */
export async function enqueue1k(size: number): Promise<Figure[]> {
  return measureConcurrentEnqueue('enqueue-1k', size, 520)
}

export const enqueue1kScenario: ScenarioDef = {
  name: 'enqueue-1k',
  summary: '1,000 enqueues of a 520-byte payload issued at once (durability full)',
  fullSize: 1_000,
  quickSize: 100,
  run: enqueue1k,
  targets: { total_s: { op: '<', value: 0.02 } },
}
