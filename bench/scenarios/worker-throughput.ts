import type { JobSpec } from '../../src/client/client.js'
import type { SqliteDurability } from '../../src/sqlite.js'
import { Worker } from '../../src/worker/worker.js'
import { secondsSince } from '../lib/stats.js'
import { openBenchStore } from '../lib/store.js'
import { withTempDir } from '../lib/temp.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

const SETUP_CHUNK = 10_000
const JOB_NAME = 'bench.noop'
/** No completion for this long: the worker is stuck, the run fails. */
const STALL_TIMEOUT_MS = 60_000

interface Row {
  tag: string
  concurrency: number
  durability: SqliteDurability
  /** Jobs run, as a fraction of the scenario's size. */
  share: number
}

const ROWS: readonly Row[] = [
  // One job at a time costs one synced commit per job (its settlement and the next claim share
  // it): the rate is the disk's sync rate whatever the count, and 100,000 jobs would take 1–4
  // minutes per run on this disk. A tenth of the jobs measures the same rate.
  { tag: 'c1', concurrency: 1, durability: 'full', share: 0.1 },
  { tag: 'c32', concurrency: 32, durability: 'full', share: 1 },
  { tag: 'c32.normal', concurrency: 32, durability: 'normal', share: 1 },
]

const fmt = (n: number): string => n.toLocaleString('en-US')

/**
 * No-op jobs end to end through one in-process Worker (inline executor, handler `async () => {}`):
 * `size` jobs (a tenth of them at concurrency 1, see ROWS) are enqueued first (client.enqueueMany in chunks of 10,000, durability 'full',
 * untimed), then the store is reopened with the row's durability and a Worker started on it. The
 * clock runs from worker.start() until the `size`-th 'job:completed' event, counted by a listener
 * (one increment per event); the event comes after the job's settlement has committed. Each row
 * has its own fresh database: concurrency 1 and 32 under 'full', and 32 under 'normal' for
 * reference.
 */
export async function workerThroughput(size: number): Promise<Figure[]> {
  const figures: Figure[] = []
  for (const row of ROWS) {
    const jobs = Math.max(1, Math.round(size * row.share))
    const seconds = await measure(jobs, row)
    const suffix = row.durability === 'full' ? '' : ` [${row.durability}]`
    figures.push(
      {
        key: `${row.tag}.total_s`,
        label: `${fmt(jobs)} no-op jobs, concurrency ${row.concurrency}${suffix}`,
        value: seconds,
        unit: 's',
      },
      {
        key: `${row.tag}.jobs_per_s`,
        label: `jobs/s, concurrency ${row.concurrency}${suffix}`,
        value: jobs / seconds,
        unit: '/s',
      },
    )
  }
  return figures
}

async function measure(size: number, row: Row): Promise<number> {
  return withTempDir('worker-throughput', async (dir) => {
    await fill(dir, size)
    const bench = await openBenchStore(dir, row.durability)
    try {
      const worker = new Worker({
        store: bench.store,
        handlers: { [JOB_NAME]: async () => {} },
        queues: ['default'],
        concurrency: row.concurrency,
      })
      let completed = 0
      let lastProgressAt = Date.now()
      let watchdog: NodeJS.Timeout | undefined
      const allCompleted = new Promise<void>((resolve, reject) => {
        worker.on('job:completed', () => {
          if (++completed === size) resolve()
          lastProgressAt = Date.now()
        })
        const fail = (what: string) => (detail: unknown) =>
          reject(new Error(`${what} during the run: ${JSON.stringify(detail)}`))
        worker.on('job:failed', fail('a job failed'))
        worker.on('job:dead', fail('a job died'))
        worker.on('job:lease-lost', fail('a lease was lost'))
        worker.on('worker:error', (error) => reject(error as Error))
        watchdog = setInterval(() => {
          if (Date.now() - lastProgressAt > STALL_TIMEOUT_MS)
            reject(new Error(`no job completed for ${STALL_TIMEOUT_MS} ms (${completed} of ${size} done)`))
        }, 1000)
      })
      let seconds: number
      try {
        const start = process.hrtime.bigint()
        await worker.start()
        await allCompleted
        seconds = secondsSince(start)
      } finally {
        clearInterval(watchdog)
        await worker.stop({ graceful: false })
      }
      const stats = await bench.store.stats()
      const done = stats.reduce((sum, queue) => sum + queue.completed, 0)
      if (done !== size) throw new Error(`${done} of ${size} jobs are completed in the store`)
      return seconds
    } finally {
      await bench.close()
    }
  })
}

/** Enqueues `size` no-op jobs (durability 'full', untimed) and closes the store. */
async function fill(dir: string, size: number): Promise<void> {
  const bench = await openBenchStore(dir, 'full')
  try {
    for (let first = 0; first < size; first += SETUP_CHUNK) {
      const count = Math.min(SETUP_CHUNK, size - first)
      const specs: JobSpec[] = new Array(count)
      for (let i = 0; i < count; i++) specs[i] = { name: JOB_NAME, payload: { seq: first + i } }
      await bench.client.enqueueMany(specs)
    }
  } finally {
    await bench.close()
  }
}

export const workerThroughputScenario: ScenarioDef = {
  name: 'worker-throughput',
  summary:
    'no-op jobs through one in-process Worker (inline): 100,000 at concurrency 32 (durability full, and normal), 10,000 at concurrency 1',
  fullSize: 100_000,
  quickSize: 2_000,
  run: workerThroughput,
  targets: { 'c32.jobs_per_s': { op: '>=', value: 20_000 } },
}
