import { withBenchSchema } from '../lib/postgres.js'
import type { Figure, ScenarioDef } from '../lib/types.js'
import { idleCpuScenario, idleWorkerCpu } from './idle-cpu.js'

/**
 * idle-cpu on PostgreSQL: an idle `ferry work` child listening on its schema's channel. What it
 * still does while idle is the slow safety-net check and the recovery of expired leases.
 */
export async function postgresIdleCpu(seconds: number): Promise<Figure[]> {
  return withBenchSchema((bench) => idleWorkerCpu(bench.url, seconds, ' [postgres]'))
}

export const postgresIdleCpuScenario: ScenarioDef = {
  name: 'postgres-idle-cpu',
  store: 'postgres',
  summary: 'PostgreSQL: CPU of an idle `ferry work` child process, as idle-cpu measures it',
  fullSize: idleCpuScenario.fullSize,
  quickSize: idleCpuScenario.quickSize,
  run: postgresIdleCpu,
  targets: idleCpuScenario.targets,
}
