import { subscribe } from '../../src/admin/events.js'
import { SqliteStore } from '../../src/sqlite.js'
import { openStore } from '../../src/store/open-store.js'
import { FRESH_STORES as STORES, scenariosPerStore } from '../lib/fresh-stores.js'
import { payloadOfBytes } from '../lib/payload.js'
import { percentile } from '../lib/stats.js'
import { openBenchStore } from '../lib/store.js'
import { withTempDir } from '../lib/temp.js'
import type { BenchStoreKind, Figure, ScenarioDef } from '../lib/types.js'

const PAYLOAD_BYTES = 520
/** Rounds of serial enqueues, alternating without and with a subscriber, so drift hits both. */
const ROUNDS = 4

/**
 * Serial enqueues on SQLite (durability full) without a subscriber and with one on another store
 * instance of the same file (as another process): what a subscriber costs the producer's commit
 * (one more WAL commit without an fsync per enqueue), and what the presence check costs when
 * nobody subscribes is inside the "without" figure. Alternating rounds of size / 2 / ROUNDS each.
 */
async function eventsSerialEnqueue(size: number): Promise<Figure[]> {
  return withTempDir('events-serial', async (dir) => {
    const bench = await openBenchStore(dir, 'full')
    const watcher = await SqliteStore.open({ path: bench.path })
    const per = Math.max(1, Math.round(size / 2 / ROUNDS))
    const seconds = { without: 0, with: 0 }
    try {
      for (let round = 0; round < 2 * ROUNDS; round++) {
        const withSubscriber = round % 2 === 1
        const subscription = withSubscriber ? await subscribe(watcher) : null
        const start = process.hrtime.bigint()
        for (let i = 0; i < per; i++)
          await bench.client.enqueue('bench.events', payloadOfBytes(PAYLOAD_BYTES, i))
        const elapsed = Number(process.hrtime.bigint() - start) / 1e9
        if (withSubscriber) seconds.with += elapsed
        else seconds.without += elapsed
        await subscription?.close()
      }
    } finally {
      await watcher.close()
      await bench.close()
    }
    const total = per * ROUNDS
    const without = total / seconds.without
    const withOne = total / seconds.with
    return [
      { key: 'without_per_s', label: 'serial enqueues/s, nobody subscribed', value: without, unit: '/s' },
      { key: 'with_per_s', label: 'serial enqueues/s, one subscriber', value: withOne, unit: '/s' },
      {
        key: 'cost_pct',
        label: 'subscriber cost',
        value: (100 * (without - withOne)) / without,
        unit: '%',
        mayBeNegative: true,
      },
    ]
  })
}

/**
 * From an enqueue through one store to its 'enqueued' event read by a subscriber on another store
 * opened from the same URL (as another process would open it), serial: p50 and p99. On SQLite the
 * event is found by the file watch after the commit, on PostgreSQL by a NOTIFY, on Redis by a
 * blocking read of the stream.
 */
function eventsLatency(kind: BenchStoreKind): (size: number) => Promise<Figure[]> {
  return (size) =>
    STORES[kind]((fresh) =>
      fresh(async ({ client, url }) => {
        const watcher = await openStore(url)
        const subscription = await subscribe(watcher, { events: ['enqueued'] })
        const latencies: number[] = []
        try {
          for (let i = 0; i < size; i++) {
            const start = process.hrtime.bigint()
            const next = subscription.next()
            await client.enqueue('bench.events', null)
            await next
            latencies.push(Number(process.hrtime.bigint() - start) / 1e6)
          }
        } finally {
          await subscription.close()
          await watcher.close()
        }
        return [
          { key: 'p50_ms', label: 'enqueue to event, p50', value: percentile(latencies, 50), unit: 'ms' },
          { key: 'p99_ms', label: 'enqueue to event, p99', value: percentile(latencies, 99), unit: 'ms' },
        ]
      }),
    )
}

export const eventsSerialEnqueueScenario: ScenarioDef = {
  name: 'events-serial-enqueue',
  summary: 'SQLite serial enqueues (full) without and with a job event subscriber on another store instance',
  fullSize: 8_000,
  quickSize: 80,
  run: eventsSerialEnqueue,
  targets: {},
}

const latencies = scenariosPerStore(
  'events-latency',
  'an enqueue to its event on a subscriber of another store opened from the same URL, p50/p99',
  { fullSize: 1_000, quickSize: 20 },
  eventsLatency,
)
export const eventsLatencyScenario = latencies.sqlite
export const postgresEventsLatencyScenario = latencies.postgres
export const redisEventsLatencyScenario = latencies.redis
