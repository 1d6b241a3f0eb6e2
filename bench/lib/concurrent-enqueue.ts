import { payloadOfBytes } from './payload.js'
import { secondsSince } from './stats.js'
import { openBenchStore } from './store.js'
import { withTempDir } from './temp.js'
import type { Figure } from './types.js'

/**
 * `size` client.enqueue calls issued at once and awaited together (Promise.all), durability
 * 'full': group commit should carry them in one transaction and one sync. Timed from the first
 * call until every promise has resolved, i.e. until every job is durable.
 */
export async function measureConcurrentEnqueue(
  label: string,
  size: number,
  payloadBytes: number,
): Promise<Figure[]> {
  return withTempDir(label, async (dir) => {
    const payloads = Array.from({ length: size }, (_, i) => payloadOfBytes(payloadBytes, i))
    const bench = await openBenchStore(dir, 'full')
    let seconds: number
    try {
      const start = process.hrtime.bigint()
      const results = await Promise.all(
        payloads.map((payload) => bench.client.enqueue('bench.concurrent', payload)),
      )
      seconds = secondsSince(start)
      const created = results.filter((result) => result.created).length
      if (created !== size) throw new Error(`${label}: ${created} of ${size} enqueues created a job`)
    } finally {
      await bench.close()
    }
    return [
      {
        key: 'total_s',
        label: `${size.toLocaleString('en-US')} concurrent enqueues`,
        value: seconds,
        unit: 's',
      },
      { key: 'enqueues_per_s', label: 'enqueues/s', value: size / seconds, unit: '/s' },
    ]
  })
}
