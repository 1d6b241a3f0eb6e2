import { measureConcurrentEnqueue } from '../lib/concurrent-enqueue.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

/** `size` enqueues of a 520-byte payload issued at once (the Gearman report's 72 s for 10,000). */
export async function enqueueConcurrent(size: number): Promise<Figure[]> {
  return measureConcurrentEnqueue('enqueue-concurrent', size, 520)
}

export const enqueueConcurrentScenario: ScenarioDef = {
  name: 'enqueue-concurrent',
  summary: '10,000 enqueues of a 520-byte payload issued at once, Promise.all (durability full)',
  fullSize: 10_000,
  quickSize: 200,
  run: enqueueConcurrent,
  targets: { total_s: { op: '<', value: 0.1 } },
}
