import { normalizeSchedule } from '../../src/core/schedule.js'
import type { Store } from '../../src/store/store.js'
import { Worker } from '../../src/worker/worker.js'
import { FRESH_STORES } from '../lib/fresh-stores.js'
import { REDIS_BENCH_SETUP } from '../lib/redis.js'
import { percentile } from '../lib/stats.js'
import type { BenchStoreKind, Figure, ScenarioDef } from '../lib/types.js'
import { idleCpuScenario, idleWorkerCpu } from './idle-cpu.js'

const IDLE_SCHEDULES = 1000

/**
 * Durable schedules' costs. Idle: `ferry work` with IDLE_SCHEDULES schedules in the store, none
 * due in the measured window (yearly, at random instants), as idle-cpu measures a worker: the
 * scheduler sleeps on one timer until the next slot of any of them, so the figure should be the
 * idle worker's own. Latency: one in-process Worker whose schedule fires every second, `size`
 * slots: from the slot's instant to the fire sent (the scheduler's timer), and to its handler
 * starting (the fire's commit, the wake-up, the claim).
 */
function schedules(kind: BenchStoreKind): (size: number) => Promise<Figure[]> {
  return (size) =>
    FRESH_STORES[kind](async (fresh) => {
      const figures: Figure[] = []
      const tag = kind === 'sqlite' ? '' : ` [${kind}]`
      const idle = await fresh(async ({ store, url }) => {
        await store.schedules({ put: yearlySchedules(IDLE_SCHEDULES) })
        return idleWorkerCpu(url, Math.max(2, Math.round(size)), ` [${IDLE_SCHEDULES} schedules]${tag}`)
      })
      figures.push(...idle.map((figure) => ({ ...figure, key: `idle.${figure.key}` })))
      const { fired, started } = await fresh(({ store }) => slotLatencies(store, size))
      for (const [what, samples] of [
        ['fire', fired],
        ['handler', started],
      ] as const) {
        for (const p of [50, 95] as const) {
          figures.push({
            key: `latency.${what}.p${p}_ms`,
            label: `slot to ${what === 'fire' ? 'fire sent' : 'handler start'}, every-second schedule, ${samples.length} slots: p${p}${tag}`,
            value: percentile(samples, p),
            unit: 'ms',
            // In whole ms (Date.now()): a timer that fires within the slot's first ms reads 0.
            mayBeZero: true,
          })
        }
      }
      return figures
    })
}

/** `count` schedules that each fire once a year, at instants spread over the year, never today. */
function yearlySchedules(count: number) {
  const today = new Date()
  return Array.from({ length: count }, (_, i) => {
    // Months 1-12 other than this one, days 1-28: a slot never in the next hours.
    const month = ((today.getUTCMonth() + 1 + (i % 11)) % 12) + 1
    const day = (i % 28) + 1
    return normalizeSchedule({
      id: `yearly-${i}`,
      cron: `${i % 60} ${i % 24} ${day} ${month} *`,
      job: { name: 'bench.noop' },
    })
  })
}

/** Runs a Worker with an every-second schedule for `slots` slots; the latencies of each, in ms. */
async function slotLatencies(store: Store, slots: number): Promise<{ fired: number[]; started: number[] }> {
  const fired: number[] = []
  const started: number[] = []
  let done!: () => void
  const finished = new Promise<void>((resolve) => (done = resolve))
  const worker = new Worker({
    store,
    concurrency: 2,
    schedules: [{ id: 'every-second', cron: '* * * * * *', job: { name: 'tick' } }],
    handlers: {
      tick: (_payload, ctx) => {
        if (started.length < slots) started.push(Date.now() - ctx.job.schedule!.slot)
        if (started.length === slots) done()
      },
    },
  })
  worker.on('schedule:fired', ({ slots: fire, at }) => {
    for (const { slot } of fire) fired.push(at - slot)
  })
  await worker.start()
  try {
    await finished
  } finally {
    await worker.stop()
  }
  return { fired: fired.slice(0, slots), started }
}

function scenario(kind: BenchStoreKind, name: string, where: string): ScenarioDef {
  return {
    name,
    store: kind,
    summary: `${where}: an idle worker's CPU with ${IDLE_SCHEDULES} schedules in the store (as idle-cpu), and the latency from a slot to its fire and to its handler`,
    fullSize: 30,
    quickSize: 3,
    run: schedules(kind),
    targets: { 'idle.cpu_pct': idleCpuScenario.targets.cpu_pct! },
  }
}

export const schedulesScenario = scenario('sqlite', 'schedules', 'SQLite (durability full)')
export const postgresSchedulesScenario = scenario('postgres', 'postgres-schedules', 'PostgreSQL')
export const redisSchedulesScenario = scenario('redis', 'redis-schedules', `Redis (${REDIS_BENCH_SETUP})`)
