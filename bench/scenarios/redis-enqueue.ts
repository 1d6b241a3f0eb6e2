import type { JobSpec } from '../../src/client/client.js'
import { payloadOfBytes } from '../lib/payload.js'
import { openRedisBench, REDIS_BENCH_SETUP, withBenchRedis } from '../lib/redis.js'
import { secondsSince } from '../lib/stats.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

const PAYLOAD_BYTES = 520
const BULK_CHUNK = 10_000
const fmt = (n: number): string => n.toLocaleString('en-US')

/**
 * The SQLite enqueue scenarios against Redis (REDIS_BENCH_SETUP), each on a fresh namespace of one
 * server: `size` client.enqueue calls issued at once (Promise.all; the client's TickBatcher hands
 * them to one Store.enqueue, one script call), 1,000 at once, size/10 one after the other (each
 * waits for its acknowledgement, so each pays a round trip and an fsync), and 10 × size with
 * enqueueMany in chunks of 10,000. A 520-byte payload throughout. Timed until every promise has
 * resolved, i.e. until Redis has written and fsynced the AOF and replied.
 */
export async function redisEnqueue(size: number): Promise<Figure[]> {
  return withBenchRedis('redis-enqueue', async (server) => {
    const figures: Figure[] = []
    const concurrent = async (tag: string, count: number): Promise<void> => {
      const bench = await openRedisBench(server, `enqueue-${tag}`)
      try {
        const payloads = Array.from({ length: count }, (_, i) => payloadOfBytes(PAYLOAD_BYTES, i))
        const start = process.hrtime.bigint()
        const results = await Promise.all(payloads.map((p) => bench.client.enqueue('bench.concurrent', p)))
        const seconds = secondsSince(start)
        if (results.filter((r) => r.created).length !== count)
          throw new Error(`${tag}: not every job was created`)
        figures.push(
          { key: `${tag}.total_s`, label: `${fmt(count)} concurrent enqueues`, value: seconds, unit: 's' },
          {
            key: `${tag}.per_s`,
            label: `enqueues/s, ${fmt(count)} concurrent`,
            value: count / seconds,
            unit: '/s',
          },
        )
      } finally {
        await bench.close()
      }
    }
    await concurrent('concurrent', size)
    await concurrent('concurrent1k', Math.min(1000, size))

    const serialCount = Math.max(10, Math.round(size / 10))
    const serial = await openRedisBench(server, 'enqueue-serial')
    try {
      const start = process.hrtime.bigint()
      for (let i = 0; i < serialCount; i++)
        await serial.client.enqueue('bench.serial', payloadOfBytes(PAYLOAD_BYTES, i))
      const seconds = secondsSince(start)
      figures.push({
        key: 'serial.per_s',
        label: `enqueues/s, one at a time (${fmt(serialCount)})`,
        value: serialCount / seconds,
        unit: '/s',
      })
    } finally {
      await serial.close()
    }

    const bulkCount = size * 10
    const bulk = await openRedisBench(server, 'enqueue-bulk')
    try {
      const start = process.hrtime.bigint()
      for (let first = 0; first < bulkCount; first += BULK_CHUNK) {
        const count = Math.min(BULK_CHUNK, bulkCount - first)
        const specs: JobSpec[] = new Array(count)
        for (let i = 0; i < count; i++)
          specs[i] = { name: 'bench.bulk', payload: payloadOfBytes(PAYLOAD_BYTES, first + i) }
        await bulk.client.enqueueMany(specs)
      }
      const seconds = secondsSince(start)
      figures.push({
        key: 'bulk.per_s',
        label: `enqueues/s, ${fmt(bulkCount)} with enqueueMany × ${fmt(BULK_CHUNK)}`,
        value: bulkCount / seconds,
        unit: '/s',
      })
    } finally {
      await bulk.close()
    }
    return figures
  })
}

export const redisEnqueueScenario: ScenarioDef = {
  name: 'redis-enqueue',
  store: 'redis',
  summary: `Redis (${REDIS_BENCH_SETUP}): 10,000 concurrent enqueues of 520 bytes, 1,000 concurrent, serial, bulk`,
  fullSize: 10_000,
  quickSize: 200,
  run: redisEnqueue,
  targets: { 'concurrent.total_s': { op: '<', value: 0.3 } },
}
