import type { Client, JobSpec } from '../../src/client/client.js'
import type { Store } from '../../src/store/store.js'
import type { PrefetchSetting } from '../../src/worker/prefetch.js'
import type { TracingOption } from '../../src/tracing/tracing-option.js'
import { Worker } from '../../src/worker/worker.js'
import { secondsSince } from './stats.js'

/** The job the throughput scenarios run: its handler does nothing (bench/fixtures/handlers.ts too). */
export const NOOP_JOB = 'bench.noop'
const SETUP_CHUNK = 10_000
/** No completion for this long: the worker is stuck, the run fails. */
const STALL_TIMEOUT_MS = 60_000

/**
 * Enqueues `size` no-op jobs with enqueueMany in chunks of 10,000 (untimed set-up); with `groups`,
 * spread over that many groups (g0, g1, …) in turn.
 */
export async function enqueueNoops(
  client: Client,
  size: number,
  { groups = 0 }: { groups?: number } = {},
): Promise<void> {
  for (let first = 0; first < size; first += SETUP_CHUNK) {
    const count = Math.min(SETUP_CHUNK, size - first)
    const specs: JobSpec[] = new Array(count)
    for (let i = 0; i < count; i++) {
      const seq = first + i
      specs[i] =
        groups === 0
          ? { name: NOOP_JOB, payload: { seq } }
          : { name: NOOP_JOB, payload: { seq }, options: { group: `g${seq % groups}` } }
    }
    await client.enqueueMany(specs)
  }
}

/**
 * Runs `size` enqueued no-op jobs through one in-process Worker (inline, `async () => {}`) and
 * returns the seconds from worker.start() to the `size`-th 'job:completed' event, which comes
 * after the job's settlement was acknowledged. Fails on a failed, dead or lost job, a worker
 * error, 60 s without a completion, or a store that does not then hold `size` completed jobs.
 */
export async function timeNoopWorker(
  store: Store,
  size: number,
  {
    concurrency,
    prefetch = 0,
    observe,
    tracing,
  }: {
    concurrency: number
    prefetch?: PrefetchSetting
    /** Called with the worker before it starts (to attach metrics to it, say). */
    observe?: (worker: Worker) => void
    tracing?: TracingOption
  },
): Promise<number> {
  const worker = new Worker({
    store,
    handlers: { [NOOP_JOB]: async () => {} },
    queues: ['default'],
    concurrency,
    prefetch,
    tracing,
  })
  observe?.(worker)
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
  const done = (await store.stats()).reduce((sum, queue) => sum + queue.completed, 0)
  if (done !== size) throw new Error(`${done} of ${size} jobs are completed in the store`)
  return seconds
}
