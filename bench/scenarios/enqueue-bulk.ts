import type { JobSpec } from '../../src/client/client.js'
import { payloadOfBytes } from '../lib/payload.js'
import { secondsSince } from '../lib/stats.js'
import { databaseBytes, openBenchStore } from '../lib/store.js'
import { withTempDir } from '../lib/temp.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

const PAYLOAD_BYTES = 100

/**
 * `size` jobs with a 100-byte payload through client.enqueueMany, `chunkSize` per call, each call
 * awaited before the next (durability 'full': one transaction and one sync per chunk). The clock
 * runs only inside enqueueMany (validation, serialisation, the commit), not while the benchmark
 * builds its own payload objects. Then the store is closed, the WAL checkpointed and truncated,
 * and the files' bytes divided by the job count.
 */
export async function enqueueBulk(
  size: number,
  chunkSize = Math.min(10_000, Math.ceil(size / 4)),
): Promise<Figure[]> {
  return withTempDir('enqueue-bulk', async (dir) => {
    const bench = await openBenchStore(dir, 'full')
    let seconds = 0
    try {
      for (let first = 0; first < size; first += chunkSize) {
        const count = Math.min(chunkSize, size - first)
        const specs: JobSpec[] = new Array(count)
        for (let i = 0; i < count; i++)
          specs[i] = { name: 'bench.bulk', payload: payloadOfBytes(PAYLOAD_BYTES, first + i) }
        const start = process.hrtime.bigint()
        const results = await bench.client.enqueueMany(specs)
        seconds += secondsSince(start)
        if (results.length !== count)
          throw new Error(`enqueueMany returned ${results.length} results for ${count} jobs`)
      }
    } finally {
      await bench.close()
    }
    const bytes = databaseBytes(bench.path)
    return [
      {
        key: 'total_s',
        label: `${size.toLocaleString('en-US')} jobs, enqueueMany × ${chunkSize.toLocaleString('en-US')}`,
        value: seconds,
        unit: 's',
      },
      { key: 'jobs_per_s', label: 'jobs/s', value: size / seconds, unit: '/s' },
      {
        key: 'bytes_per_job',
        label: 'database bytes per job (after checkpoint)',
        value: bytes / size,
        unit: 'B/job',
      },
    ]
  })
}

export const enqueueBulkScenario: ScenarioDef = {
  name: 'enqueue-bulk',
  summary: '1,000,000 jobs with a ~100-byte payload via enqueueMany in chunks of 10,000 (durability full)',
  fullSize: 1_000_000,
  quickSize: 2_000,
  run: (size) => enqueueBulk(size),
  targets: { total_s: { op: '<', value: 8 } },
}
