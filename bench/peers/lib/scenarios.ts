/**
 * The scenarios: what each measures (for the tables) and how (run inside a child process, on one
 * product's adapter). Every product gets the same calls; only the adapters differ.
 */
import { processCpu, clockTicksPerSecond } from '../../lib/proc.js'
import { secondsSince } from '../../lib/stats.js'
import type { Adapter, CompletedCounter, MeasureResult, Producer, ScenarioName, Target } from './types.js'

export type Unit = 'jobs/s' | 'ms' | '% of a core' | 'MiB'

export interface FigureSpec {
  key: string
  /** What the figure is, for the table's heading. */
  label: string
  unit: Unit
  better: 'higher' | 'lower'
}

export interface ScenarioDef {
  name: ScenarioName
  summary: string
  figures: readonly FigureSpec[]
  /** Jobs (or, for idle, seconds) at full size and with --quick. */
  size: { full: number; quick: number }
  /** Set-up (migrate, pre-enqueue) in a process of its own, so the measured one starts fresh. */
  prepareApart: boolean
  /** Untimed set-up: the store is empty and unmigrated before it. */
  prepare(adapter: Adapter, target: Target, size: number): Promise<void>
  measure(adapter: Adapter, target: Target, size: number, context: MeasureContext): Promise<MeasureResult>
}

export interface MeasureContext {
  variant: string
  quick: boolean
}

const RATE: FigureSpec = { key: 'rate', label: 'jobs/s', unit: 'jobs/s', better: 'higher' }
/** Enqueues before the clock starts: connections made, scripts loaded, code warm. */
const WARM_UP = 10
/** Jobs in each of the bulk scenario's WARM_UP untimed calls. */
const BULK_WARM_UP = 100

async function warmUpSingle(producer: Producer): Promise<void> {
  for (let i = 0; i < WARM_UP; i++) await producer.enqueueOne(-1 - i)
}
/** Jobs per enqueueBulk call when a scenario pre-enqueues its jobs. */
const SETUP_CHUNK = 10_000
/**
 * The idle worker's CPU time is counted from this long after its start: until then it still
 * holds start-up's late work (V8's memory reducer runs full GCs about 8 and 18 s after a start,
 * in the tsx loader thread too), which a bare Node process shows at ~0.3 % of a core.
 */
const IDLE_SETTLE_SECONDS = { full: 20, quick: 1 }
/** How often the store is asked whether every job is completed (completion 'early' or 'none'). */
const CONFIRM_POLL_MS = 5

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Migrates, then enqueues `size` jobs through the bulk path in chunks (untimed). */
async function preEnqueue(adapter: Adapter, target: Target, size: number): Promise<void> {
  await adapter.migrate(target)
  if (size === 0) return
  const producer = await adapter.producer(target)
  try {
    for (let first = 0; first < size; first += SETUP_CHUNK)
      await producer.enqueueBulk(first, Math.min(SETUP_CHUNK, size - first))
  } finally {
    await producer.close()
  }
}

/** A scenario that times `enqueue` of `size` jobs on a fresh producer, after a warm-up: jobs/s. */
function enqueueScenario(
  name: ScenarioName,
  summary: string,
  size: ScenarioDef['size'],
  enqueue: (producer: Producer, size: number) => Promise<void>,
  warmUp: (producer: Producer) => Promise<void> = warmUpSingle,
): ScenarioDef {
  return {
    name,
    summary: `${size.full.toLocaleString('en-US')} ${summary}`,
    figures: [RATE],
    size,
    prepareApart: false,
    prepare: (adapter, target) => adapter.migrate(target),
    async measure(adapter, target, size) {
      const producer = await adapter.producer(target)
      try {
        await warmUp(producer)
        const start = process.hrtime.bigint()
        await enqueue(producer, size)
        return { figures: { rate: size / secondsSince(start) } }
      } finally {
        await producer.close()
      }
    },
  }
}

/**
 * Starts a worker on `size` waiting jobs and returns jobs/s from the start of the worker's
 * creation until the store holds every job completed; a product too slow for the window is
 * measured as what it completed within it.
 */
async function timeProcessing(
  adapter: Adapter,
  target: Target,
  size: number,
  concurrency: number,
  { variant, quick }: MeasureContext,
): Promise<MeasureResult> {
  const windowSeconds = adapter.processWindowSeconds?.(variant, quick) ?? (quick ? 30 : 120)
  let started = 0
  let completed = 0
  let reached: () => void = () => {}
  const allSeen = new Promise<void>((resolve) => (reached = resolve))
  const seen = (): number => (adapter.completion === 'none' ? started : completed)
  const hooks = {
    onStart() {
      started++
      if (seen() >= size) reached()
    },
    onCompleted() {
      completed++
      if (seen() >= size) reached()
    },
  }
  // Opened before the clock starts: asking the store is the benchmark's cost, not the product's.
  const counter = adapter.completion === 'durable' ? null : await openCounter(adapter, target)
  const start = process.hrtime.bigint()
  const deadline = Date.now() + windowSeconds * 1000
  let done: number
  let seconds: number
  try {
    const worker = await adapter.startWorker(target, { concurrency, variant, hooks })
    try {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        allSeen,
        new Promise<void>((resolve) => (timer = setTimeout(resolve, deadline - Date.now()))),
      ])
      clearTimeout(timer)
      if (counter === null) {
        done = completed
      } else {
        // The product settles in the background: the jobs are done once the store says so.
        done = await counter.count(size)
        while (done < size && Date.now() < deadline) {
          await sleep(CONFIRM_POLL_MS)
          done = await counter.count(size)
        }
      }
      seconds = secondsSince(start)
    } finally {
      await worker.stop()
    }
  } finally {
    await counter?.close()
  }
  if (done === 0) throw new Error(`no job completed within ${windowSeconds} s`)
  const figures = { rate: done / seconds }
  return done >= size ? { figures } : { figures, windowed: { done, size, windowSeconds } }
}

function openCounter(adapter: Adapter, target: Target): Promise<CompletedCounter> {
  if (adapter.completedCounter === undefined)
    throw new Error(`${adapter.product} cannot count completed jobs`)
  return adapter.completedCounter(target)
}

function processScenario(name: ScenarioName, concurrency: number, full: number, quick: number): ScenarioDef {
  return {
    name,
    summary: `${full.toLocaleString('en-US')} no-op jobs waiting, one worker at concurrency ${concurrency}: from the worker's creation until the store holds them all completed`,
    figures: [RATE],
    size: { full, quick },
    prepareApart: false,
    prepare: preEnqueue,
    measure: (adapter, target, size, context) => timeProcessing(adapter, target, size, concurrency, context),
  }
}

export const SCENARIOS: readonly ScenarioDef[] = [
  enqueueScenario(
    'serial-enqueue',
    'jobs enqueued one at a time, each awaited (one durable commit each)',
    { full: 2000, quick: 50 },
    async (producer, size) => {
      for (let seq = 0; seq < size; seq++) await producer.enqueueOne(seq)
    },
  ),
  enqueueScenario(
    'bulk-enqueue',
    "jobs in one call of the product's bulk path",
    { full: 10_000, quick: 200 },
    (producer, size) => producer.enqueueBulk(0, size),
    // The path measured, warmed as the single enqueues are: its loops run compiled, as in a
    // process that enqueues in bulk more than once, rather than interpreted on their first call.
    async (producer) => {
      for (let i = 0; i < WARM_UP; i++) await producer.enqueueBulk(-(i + 1) * BULK_WARM_UP, BULK_WARM_UP)
    },
  ),
  enqueueScenario(
    'concurrent-enqueue',
    'single enqueues started at once (Promise.all of enqueueOne)',
    { full: 10_000, quick: 200 },
    async (producer, size) => {
      await Promise.all(Array.from({ length: size }, (_, seq) => producer.enqueueOne(seq)))
    },
  ),
  processScenario('process-c1', 1, 2000, 50),
  processScenario('process-c10', 10, 20_000, 200),
  {
    name: 'startup',
    summary:
      "one job waiting, store migrated, a fresh process with the product's modules loaded: from the start of creating the worker (connections included) to the job's handler starting",
    figures: [{ key: 'ms', label: 'ms to the first job', unit: 'ms', better: 'lower' }],
    size: { full: 1, quick: 1 },
    prepareApart: true,
    prepare: (adapter, target, size) => preEnqueue(adapter, target, size),
    async measure(adapter, target) {
      let first: (at: bigint) => void = () => {}
      const firstStart = new Promise<bigint>((resolve) => (first = resolve))
      const hooks = { onStart: () => first(process.hrtime.bigint()), onCompleted() {} }
      const start = process.hrtime.bigint()
      const worker = await adapter.startWorker(target, { concurrency: 1, variant: '', hooks })
      try {
        let timer: NodeJS.Timeout | undefined
        const at = await Promise.race([
          firstStart,
          new Promise<never>(
            (_, reject) =>
              (timer = setTimeout(() => reject(new Error('no job started within 30 s')), 30_000)),
          ),
        ])
        clearTimeout(timer)
        return { figures: { ms: Number(at - start) / 1e6 } }
      } finally {
        await worker.stop()
      }
    },
  },
  {
    name: 'idle',
    summary: `a worker on an empty queue (store migrated, a fresh process): CPU time over the window (utime + stime, /proc) from ${IDLE_SETTLE_SECONDS.full} s after its start, as % of one core, and RSS at the end`,
    figures: [
      { key: 'cpu', label: 'CPU, % of one core', unit: '% of a core', better: 'lower' },
      { key: 'rss', label: 'RSS', unit: 'MiB', better: 'lower' },
    ],
    size: { full: 20, quick: 2 },
    prepareApart: true,
    prepare: (adapter, target) => adapter.migrate(target),
    async measure(adapter, target, seconds, { variant, quick }) {
      const hooks = { onStart() {}, onCompleted() {} }
      const worker = await adapter.startWorker(target, { concurrency: 1, variant, hooks })
      try {
        return await idleFigures(seconds, quick)
      } finally {
        await worker.stop()
      }
    },
  },
]

/** CPU (% of a core) and RSS (MiB) of this process idling for `seconds`, after the settle. */
export async function idleFigures(seconds: number, quick: boolean): Promise<MeasureResult> {
  await sleep((quick ? IDLE_SETTLE_SECONDS.quick : IDLE_SETTLE_SECONDS.full) * 1000)
  const before = processCpu(process.pid).self
  const start = process.hrtime.bigint()
  await sleep(seconds * 1000)
  const ticks = processCpu(process.pid).self - before
  const elapsed = secondsSince(start)
  return {
    figures: {
      cpu: ((ticks / clockTicksPerSecond()) * 100) / elapsed,
      rss: process.memoryUsage().rss / 2 ** 20,
    },
  }
}

export function scenarioNamed(name: ScenarioName): ScenarioDef {
  const def = SCENARIOS.find((s) => s.name === name)
  if (def === undefined) throw new Error(`no scenario ${name}`)
  return def
}
