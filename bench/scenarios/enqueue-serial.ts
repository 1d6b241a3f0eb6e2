import { measureSyncRate } from '../lib/fsync.js'
import { payloadOfBytes } from '../lib/payload.js'
import { secondsSince } from '../lib/stats.js'
import { openBenchStore } from '../lib/store.js'
import { withTempDir } from '../lib/temp.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

const PAYLOAD_BYTES = 520

/**
 * `size` enqueues of a 520-byte payload, each awaited before the next is issued (durability
 * 'full'): every one is its own commit and its own sync, so the disk's sync rate is the ceiling.
 * For the ratio, the raw rate (4 KiB append + fsync: strace shows SQLite's WAL commit calls fsync,
 * not fdatasync, here) is measured in the same directory, half just before the enqueues and half
 * just after, since a shared virtual disk's rate drifts.
 */
export async function enqueueSerial(size: number): Promise<Figure[]> {
  return withTempDir('enqueue-serial', async (dir) => {
    const probes = Math.max(1, Math.round(Math.min(size, 1_000) / 2))
    const before = measureSyncRate(dir, probes, 'fsync')
    const payloads = Array.from({ length: size }, (_, i) => payloadOfBytes(PAYLOAD_BYTES, i))
    const bench = await openBenchStore(dir, 'full')
    let seconds: number
    try {
      const start = process.hrtime.bigint()
      for (const payload of payloads) await bench.client.enqueue('bench.serial', payload)
      seconds = secondsSince(start)
    } finally {
      await bench.close()
    }
    const after = measureSyncRate(dir, probes, 'fsync')
    const syncRate = (2 * probes) / (probes / before + probes / after)
    const rate = size / seconds
    return [
      { key: 'total_s', label: `${size.toLocaleString('en-US')} serial enqueues`, value: seconds, unit: 's' },
      { key: 'enqueues_per_s', label: 'enqueues/s', value: rate, unit: '/s' },
      { key: 'sync_per_s', label: 'raw fsync rate, same dir, before + after', value: syncRate, unit: '/s' },
      { key: 'ratio_to_sync', label: 'enqueue rate ÷ raw fsync rate', value: rate / syncRate, unit: '×' },
    ]
  })
}

export const enqueueSerialScenario: ScenarioDef = {
  name: 'enqueue-serial',
  summary: '10,000 enqueues of a 520-byte payload, each awaited before the next (durability full)',
  fullSize: 10_000,
  quickSize: 200,
  run: enqueueSerial,
  targets: { ratio_to_sync: { op: '>=', value: 0.5 } },
}
