import type { Client } from '../../src/client/client.js'
import type { Store } from '../../src/store/store.js'
import type { PrefetchSetting } from '../../src/worker/prefetch.js'
import { enqueueNoops, timeNoopWorker } from '../lib/noop-jobs.js'
import { withBenchSchema } from '../lib/postgres.js'
import { openRedisBench, REDIS_BENCH_SETUP, withBenchRedis } from '../lib/redis.js'
import { openBenchStore } from '../lib/store.js'
import { withTempDir } from '../lib/temp.js'
import type { BenchStoreKind, Figure, ScenarioDef } from '../lib/types.js'

const CONCURRENCY = 10
/** The default before 'auto' (0), the default now, and a fixed prefetch of one job per slot. */
const SETTINGS: readonly { key: string; prefetch: PrefetchSetting; label: string }[] = [
  { key: 'p0', prefetch: 0, label: 'prefetch 0 (the default before auto)' },
  { key: 'auto', prefetch: 'auto', label: 'prefetch auto (the default)' },
  { key: 'p10', prefetch: 10, label: 'prefetch 10' },
]
const fmt = (n: number): string => n.toLocaleString('en-US')

interface Opened {
  store: Store
  client: Client
}

/** Runs fn on a fresh store of this setting's own, closed afterwards. */
type WithStore = (key: string, fn: (opened: Opened) => Promise<number>) => Promise<number>

/** Each setting on a fresh store: `size` no-op jobs enqueued (untimed), then one worker runs them. */
async function measureSettings(size: number, withStore: WithStore): Promise<Figure[]> {
  const figures: Figure[] = []
  for (const { key, prefetch, label } of SETTINGS) {
    const seconds = await withStore(key, async ({ store, client }) => {
      await enqueueNoops(client, size)
      return await timeNoopWorker(store, size, { concurrency: CONCURRENCY, prefetch })
    })
    figures.push({
      key: `${key}.jobs_per_s`,
      label: `jobs/s, ${fmt(size)} no-op jobs, concurrency ${CONCURRENCY}, ${label}`,
      value: size / seconds,
      unit: '/s',
    })
  }
  return figures
}

/** Opens, runs fn, closes: whatever fn does. */
async function using<T extends { close(): Promise<void> }>(
  opening: Promise<T>,
  fn: (opened: T) => Promise<number>,
): Promise<number> {
  const opened = await opening
  try {
    return await fn(opened)
  } finally {
    await opened.close()
  }
}

const RUNS: Record<BenchStoreKind, (size: number) => Promise<Figure[]>> = {
  sqlite: (size) =>
    withTempDir('prefetch-default', (dir) =>
      measureSettings(size, (key, fn) => using(openBenchStore(dir, 'full', `${key}.db`), fn)),
    ),
  postgres: (size) =>
    measureSettings(size, (_key, fn) =>
      withBenchSchema(async (bench) => {
        const client = await bench.client()
        return await fn({ store: client.store, client })
      }),
    ),
  redis: (size) =>
    withBenchRedis('prefetch-default', (server) =>
      measureSettings(size, (key, fn) => using(openRedisBench(server, `prefetch-${key}`), fn)),
    ),
}

function scenario(store: BenchStoreKind, name: string, where: string): ScenarioDef {
  return {
    name,
    store,
    summary: `${where}: ${fmt(20_000)} no-op jobs through one in-process Worker (inline), concurrency ${CONCURRENCY}, with prefetch 0 (the default before auto), auto (the default) and 10`,
    fullSize: 20_000,
    quickSize: 300,
    run: RUNS[store],
    targets: {},
  }
}

export const prefetchDefaultScenario = scenario('sqlite', 'prefetch-default', 'SQLite (durability full)')
export const postgresPrefetchDefaultScenario = scenario('postgres', 'postgres-prefetch-default', 'PostgreSQL')
export const redisPrefetchDefaultScenario = scenario(
  'redis',
  'redis-prefetch-default',
  `Redis (${REDIS_BENCH_SETUP})`,
)
