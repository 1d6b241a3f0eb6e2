import { openRedisBench, REDIS_BENCH_SETUP, withBenchRedis } from '../lib/redis.js'
import type { Figure, ScenarioDef } from '../lib/types.js'
import { idleCpuScenario, idleWorkerCpu } from './idle-cpu.js'

/**
 * idle-cpu on Redis (REDIS_BENCH_SETUP): an idle `ferry work` child subscribed to its namespace's
 * shard channel. What it still does while idle is the slow safety-net check and the recovery of
 * expired leases.
 */
export async function redisIdleCpu(seconds: number): Promise<Figure[]> {
  return withBenchRedis('redis-idle-cpu', async (server) => {
    const bench = await openRedisBench(server, 'idle')
    try {
      return await idleWorkerCpu(bench.url, seconds, '')
    } finally {
      await bench.close()
    }
  })
}

export const redisIdleCpuScenario: ScenarioDef = {
  name: 'redis-idle-cpu',
  store: 'redis',
  summary: `Redis (${REDIS_BENCH_SETUP}): CPU of an idle \`ferry work\` child process, as idle-cpu measures it`,
  fullSize: idleCpuScenario.fullSize,
  quickSize: idleCpuScenario.quickSize,
  run: redisIdleCpu,
  targets: idleCpuScenario.targets,
}
