import { setTimeout as sleep } from 'node:timers/promises'
import {
  openRedisBench,
  REDIS_BENCH_SETUP,
  withBenchRedis,
  withRedisChildWorker,
  type RedisBench,
} from '../lib/redis.js'
import { percentile } from '../lib/stats.js'
import type { Figure, ScenarioDef } from '../lib/types.js'
import { redisWakeFloor } from '../lib/wake-floor.js'

const WARMUP_SAMPLES = 2
const SETTLE_MS = 500
const GAP_MIN_MS = 5
const GAP_MAX_MS = 20
const SAMPLE_TIMEOUT_MS = 10_000

/**
 * Wake-up latency across processes on Redis (REDIS_BENCH_SETUP), measured as wake-latency does on
 * SQLite: an idle `ferry work` child process (bench/fixtures/handlers.ts) subscribed to the
 * namespace's wake channel, and this process enqueuing one job at a time. The clock is
 * process.hrtime.bigint() (CLOCK_MONOTONIC, shared by both processes), read here just before
 * client.enqueue() and in the child as the handler's first act. Each sample waits until the job is
 * completed (the worker is idle again), then 5–20 ms more; 2 warm-up samples are not counted.
 * Then the floor (bench/lib/wake-floor.ts): what a bare durable write and a message cost with the
 * same gaps, which no wake-up can beat.
 */
export async function redisWake(samples: number): Promise<Figure[]> {
  return withBenchRedis('redis-wake', async (server) => {
    const bench = await openRedisBench(server, 'wake')
    try {
      const wake: number[] = []
      const commit: number[] = []
      await withRedisChildWorker(bench.url, 60 + samples, async (child) => {
        const waiting = new Map<number, (startedNs: bigint) => void>()
        child.onLine((line) => {
          const report = JSON.parse(line) as { seq: number; startedNs: string }
          waiting.get(report.seq)?.(BigInt(report.startedNs))
        })
        await sleep(SETTLE_MS)
        for (let seq = 0; seq < WARMUP_SAMPLES + samples; seq++) {
          child.assertAlive()
          const started = new Promise<bigint>((resolve) => waiting.set(seq, resolve))
          const before = process.hrtime.bigint()
          const { id } = await bench.client.enqueue('bench.wake', { seq })
          const committed = process.hrtime.bigint()
          const startedNs = await withTimeout(started, `job ${seq} did not start`)
          waiting.delete(seq)
          if (seq >= WARMUP_SAMPLES) {
            wake.push(Number(startedNs - before) / 1e6)
            commit.push(Number(committed - before) / 1e6)
          }
          await untilCompleted(bench, id)
          await sleep(GAP_MIN_MS + Math.random() * (GAP_MAX_MS - GAP_MIN_MS))
        }
      })
      const floor = await redisWakeFloor(server.url, samples, { minMs: GAP_MIN_MS, maxMs: GAP_MAX_MS })
      return [
        {
          key: 'p50',
          label: 'enqueue → handler start, other process, p50',
          value: percentile(wake, 50),
          unit: 'ms',
        },
        {
          key: 'p99',
          label: 'enqueue → handler start, other process, p99',
          value: percentile(wake, 99),
          unit: 'ms',
        },
        {
          key: 'max',
          label: 'enqueue → handler start, other process, max',
          value: percentile(wake, 100),
          unit: 'ms',
        },
        {
          key: 'commit.p50',
          label: 'of which enqueue → enqueue resolved (AOF fsynced), p50',
          value: percentile(commit, 50),
          unit: 'ms',
        },
        {
          key: 'floor.p50',
          label: 'floor: a SET + PUBLISH script (fsynced) → heard on another connection, same gaps, p50',
          value: percentile(floor, 50),
          unit: 'ms',
        },
      ] satisfies Figure[]
    } finally {
      await bench.close()
    }
  })
}

async function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${SAMPLE_TIMEOUT_MS} ms`)), SAMPLE_TIMEOUT_MS)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

async function untilCompleted(bench: RedisBench, id: string): Promise<void> {
  const deadline = Date.now() + SAMPLE_TIMEOUT_MS
  for (;;) {
    const job = await bench.store.getJob(id)
    if (job?.state === 'completed') return
    if (Date.now() > deadline) throw new Error(`job ${id} was not completed within ${SAMPLE_TIMEOUT_MS} ms`)
    await sleep(1)
  }
}

export const redisWakeScenario: ScenarioDef = {
  name: 'redis-wake',
  store: 'redis',
  summary: `Redis (${REDIS_BENCH_SETUP}): enqueue → handler start in an idle \`ferry work\` child, p50/p99/max over 200 jobs`,
  fullSize: 200,
  quickSize: 10,
  run: redisWake,
  targets: { p50: { op: '<', value: 1 }, p99: { op: '<', value: 10 } },
}
