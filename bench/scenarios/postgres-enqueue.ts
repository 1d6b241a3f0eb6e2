import { durabilityLabel, withBenchSchema } from '../lib/postgres.js'
import { payloadOfBytes } from '../lib/payload.js'
import { percentile, secondsSince } from '../lib/stats.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

const PAYLOAD_BYTES = 520
const fmt = (n: number): string => n.toLocaleString('en-US')

/**
 * Enqueues to PostgreSQL through the Client, as the SQLite enqueue scenarios do: `size` calls of
 * client.enqueue (520-byte payload) issued at once and awaited together — group commit carries
 * the calls of one tick in one Store.enqueue, one statement, one commit — then a tenth as many
 * awaited one after another (one round trip and one commit each). Each on a fresh schema; the
 * clock runs until every promise resolved, i.e. every job is committed.
 */
export async function postgresEnqueue(size: number): Promise<Figure[]> {
  const serialCount = Math.max(10, Math.round(size / 10))
  return withBenchSchema(async (bench) => {
    const durability = await durabilityLabel(bench)
    const client = await bench.client()
    const payloads = Array.from({ length: size }, (_, i) => payloadOfBytes(PAYLOAD_BYTES, i))
    // One enqueue first, untimed: connections and prepared statements.
    await client.enqueue('bench.warmup', payloadOfBytes(PAYLOAD_BYTES, -1))

    let start = process.hrtime.bigint()
    const results = await Promise.all(payloads.map((payload) => client.enqueue('bench.concurrent', payload)))
    const concurrentSeconds = secondsSince(start)
    if (results.filter((r) => r.created).length !== size) throw new Error('an enqueue created no job')

    const serial: number[] = []
    for (let i = 0; i < serialCount; i++) {
      const payload = payloadOfBytes(PAYLOAD_BYTES, size + i)
      start = process.hrtime.bigint()
      await client.enqueue('bench.serial', payload)
      serial.push(secondsSince(start) * 1000)
    }
    const serialSeconds = serial.reduce((a, b) => a + b, 0) / 1000
    return [
      {
        key: 'concurrent.total_s',
        label: `${fmt(size)} concurrent enqueues, ${PAYLOAD_BYTES} B [postgres, ${durability}]`,
        value: concurrentSeconds,
        unit: 's',
      },
      {
        key: 'concurrent.per_s',
        label: 'concurrent enqueues/s [postgres]',
        value: size / concurrentSeconds,
        unit: '/s',
      },
      {
        key: 'serial.per_s',
        label: `${fmt(serialCount)} serial (awaited) enqueues: enqueues/s [postgres]`,
        value: serialCount / serialSeconds,
        unit: '/s',
      },
      {
        key: 'serial.p50',
        label: 'serial enqueue p50 [postgres]',
        value: percentile(serial, 50),
        unit: 'ms',
      },
    ]
  })
}

export const postgresEnqueueScenario: ScenarioDef = {
  name: 'postgres-enqueue',
  store: 'postgres',
  summary: 'PostgreSQL: 10,000 concurrent enqueues of 520 B through group commit, then 1,000 serial ones',
  fullSize: 10_000,
  quickSize: 200,
  run: postgresEnqueue,
  targets: { 'concurrent.total_s': { op: '<', value: 0.5 } },
}
