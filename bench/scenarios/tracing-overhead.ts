import { context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, NoopSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { createClient } from '../../src/client/client.js'
import { SqliteStore } from '../../src/sqlite.js'
import type { TracingOption } from '../../src/tracing/tracing-option.js'
import { NOOP_JOB, timeNoopWorker } from '../lib/noop-jobs.js'
import { secondsSince } from '../lib/stats.js'
import { withTempDir } from '../lib/temp.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

/** Enqueues issued at once: group commit makes each such wave a few transactions. */
const WAVE = 1_000
const CONCURRENCY = 10
const WARM_UP = 5_000

/**
 * The ways a process may run Ferry with respect to tracing:
 * - off: `tracing: false`, no package loaded;
 * - api: the default with `@opentelemetry/api` installed but no SDK registered (its no-op tracer);
 * - sdk: an SDK tracer provider that records every span (always sampled) and an
 *   AsyncLocalStorage context manager, as an app that traces has, exporting nowhere (a no-op span
 *   processor), so the figure is Ferry's spans and the SDK's, not an exporter's;
 * - sdk-off: the same app with Ferry's tracing off: what the app's SDK costs without Ferry's spans
 *   (the context manager slows every promise), the baseline of 'sdk'.
 */
type Mode = 'off' | 'api' | 'sdk-off' | 'sdk'
const MODES: readonly Mode[] = ['off', 'api', 'sdk-off', 'sdk']
/** What each traced mode's overhead is measured against. */
const BASELINE: Partial<Record<Mode, Mode>> = { api: 'off', sdk: 'sdk-off' }

const fmt = (n: number): string => n.toLocaleString('en-US')

/**
 * Enqueue and no-op throughput with tracing off, on without an SDK, and on with one (against the
 * same SDK with Ferry's tracing off), each on a fresh SQLite database (durability 'normal', so
 * that per-call CPU, not the disk's sync, sets the rate): `size` enqueues issued in waves of 1,000
 * at once, then the `size` jobs run by one in-process Worker (inline, concurrency 10, prefetch
 * auto); each mode twice (in MODES' order, then back). Overheads are against BASELINE. An untimed
 * round of 5,000 jobs with tracing off goes first.
 */
export async function tracingOverhead(size: number): Promise<Figure[]> {
  // Untimed: the first mode measured would otherwise pay the JIT's warm-up for all of them.
  await measure('off', Math.min(size, WARM_UP))
  // Each mode twice, in the order off, api, sdk-off, sdk, then back, so that a drift of the machine
  // during the run weighs on every mode alike; a mode's rate is over both of its rounds.
  const seconds = new Map<Mode, { enqueue: number; run: number }>()
  for (const mode of [...MODES, ...[...MODES].reverse()]) {
    const measured = await measure(mode, size)
    const sum = seconds.get(mode) ?? { enqueue: 0, run: 0 }
    seconds.set(mode, { enqueue: sum.enqueue + measured.enqueue, run: sum.run + measured.run })
  }
  const rates = new Map<Mode, { enqueue: number; run: number }>()
  for (const [mode, { enqueue, run }] of seconds)
    rates.set(mode, { enqueue: (2 * size) / enqueue, run: (2 * size) / run })
  const figures: Figure[] = []
  for (const mode of MODES) {
    const { enqueue, run } = rates.get(mode)!
    figures.push(
      { key: `${mode}.enqueues_per_s`, label: `tracing ${mode}: enqueues/s`, value: enqueue, unit: '/s' },
      { key: `${mode}.jobs_per_s`, label: `tracing ${mode}: no-op jobs/s`, value: run, unit: '/s' },
    )
    const baseline = BASELINE[mode]
    if (baseline === undefined) continue
    const off = rates.get(baseline)!
    figures.push(
      {
        key: `${mode}.enqueue_overhead_pct`,
        label: `tracing ${mode}: enqueue overhead against ${baseline}`,
        value: (100 * (off.enqueue - enqueue)) / off.enqueue,
        unit: '%',
        mayBeZero: true,
        mayBeNegative: true,
      },
      {
        key: `${mode}.run_overhead_pct`,
        label: `tracing ${mode}: no-op job overhead against ${baseline}`,
        value: (100 * (off.run - run)) / off.run,
        unit: '%',
        mayBeZero: true,
        mayBeNegative: true,
      },
    )
  }
  return figures
}

/** The seconds `size` enqueues took, and `size` no-op jobs. */
async function measure(mode: Mode, size: number): Promise<{ enqueue: number; run: number }> {
  const sdk = mode === 'sdk' || mode === 'sdk-off' ? startSdk() : null
  const tracing: TracingOption =
    mode === 'off' || mode === 'sdk-off' ? false : sdk === null ? true : { tracerProvider: sdk.provider }
  try {
    return await withTempDir('tracing-overhead', async (dir) => {
      const store = await SqliteStore.open({ path: `${dir}/bench.db`, durability: 'normal' })
      try {
        const client = createClient({ store, tracing })
        const start = process.hrtime.bigint()
        for (let first = 0; first < size; first += WAVE) {
          const count = Math.min(WAVE, size - first)
          const wave: Promise<unknown>[] = new Array(count)
          for (let i = 0; i < count; i++) wave[i] = client.enqueue(NOOP_JOB, { seq: first + i })
          await Promise.all(wave)
        }
        const enqueueSeconds = secondsSince(start)
        await client.close()
        const runSeconds = await timeNoopWorker(store, size, {
          concurrency: CONCURRENCY,
          prefetch: 'auto',
          tracing,
        })
        return { enqueue: enqueueSeconds, run: runSeconds }
      } finally {
        await store.close()
      }
    })
  } finally {
    await sdk?.stop()
  }
}

function startSdk(): { provider: BasicTracerProvider; stop: () => Promise<void> } {
  const contextManager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(contextManager)
  const provider = new BasicTracerProvider({ spanProcessors: [new NoopSpanProcessor()] })
  return {
    provider,
    async stop() {
      await provider.shutdown()
      context.disable()
    },
  }
}

export const tracingOverheadScenario: ScenarioDef = {
  name: 'tracing-overhead',
  summary: `enqueue and no-op throughput with OpenTelemetry tracing off, on without an SDK, and on with one recording every span against that SDK with tracing off (${fmt(20_000)} jobs twice per mode, durability normal)`,
  fullSize: 20_000,
  quickSize: 200,
  run: tracingOverhead,
  targets: {},
}
