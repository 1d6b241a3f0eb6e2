import type { ControlParams, Store } from '../../src/store/store.js'
import { queuesShape, timeClaims, type ClaimShape } from '../lib/claims.js'
import { enqueueNoops, timeNoopWorker } from '../lib/noop-jobs.js'
import { FRESH_STORES as STORES, type Fresh } from '../lib/fresh-stores.js'
import { REDIS_BENCH_SETUP } from '../lib/redis.js'
import { percentile } from '../lib/stats.js'
import type { BenchStoreKind, Figure, ScenarioDef } from '../lib/types.js'

const QUEUE = 'default'
const fmt = (n: number): string => n.toLocaleString('en-US')

/** The queue settings each row measures under; none is binding except where the label says so. */
interface Setting {
  tag: string
  text: string
  control: ControlParams[]
  /** The jobs spread over this many groups; 0: none has a group. */
  groups?: number
}

const NONE: Setting = { tag: 'none', text: 'no queue settings', control: [] }
const LIMITED: Setting = {
  tag: 'limit',
  text: 'a concurrency limit of 1,000,000 on the queue (counted, never reached)',
  control: [{ limit: { queue: QUEUE, concurrency: 1_000_000 } }],
}
const PAUSED_AHEAD: Setting = {
  tag: 'paused_ahead',
  text: 'a paused queue ahead of it in the claim',
  control: [{ pause: { queue: 'bench-empty-1' } }],
}

const RATED: Setting = {
  tag: 'rate',
  text: 'a rate of 1,000,000/s on the queue (every start counted, never reached)',
  control: [{ limit: { queue: QUEUE, rate: { limit: 1_000_000, perMs: 1000 } } }],
}

/** The jobs spread over `groups` groups: each claim goes round them. */
function grouped(groups: number): Setting {
  return {
    tag: `groups_${groups}`,
    text: `the jobs in ${fmt(groups)} group${groups === 1 ? '' : 's'}`,
    control: [],
    groups,
  }
}

const GROUP_LIMITED: Setting = {
  tag: 'groups_1000_limited',
  text: 'the jobs in 1,000 groups, each group limited (concurrency 1,000,000 and a rate of 1,000,000/s)',
  control: [
    {
      limit: {
        queue: QUEUE,
        groupConcurrency: 1_000_000,
        groupRate: { limit: 1_000_000, perMs: 1000 },
      },
    },
  ],
  groups: 1000,
}

/**
 * What queue control costs the claim and a worker. Claim latency: claims of 1 job from a queue of
 * `size` ready jobs, p50 over `size / 10` claims (the claimed jobs stay active, so a limited
 * queue's claims count up to that many live leases), with no settings, with a limit and a rate that
 * are never reached, with a paused queue ahead of it in the claim's list, and with the jobs spread
 * over 1, 100 and 1,000 groups (the claim goes round them; how its cost grows with the groups), and
 * over 1,000 limited groups (each group's leases and starts counted). Worker: `size` no-op jobs
 * through one in-process Worker at concurrency 10, with no settings, with the queue limited to 5
 * (the limit, not the worker, decides how many run), with a rate of 2,000/s (which binds), and with
 * the jobs in 1,000 groups, free or each limited to one at a time. A fresh store for each row.
 */
function queueControl(kind: BenchStoreKind): (size: number) => Promise<Figure[]> {
  return (size) =>
    STORES[kind](async (fresh) => {
      const figures: Figure[] = []
      const claims = Math.max(20, Math.round(size / 10))
      for (const setting of [
        NONE,
        LIMITED,
        RATED,
        PAUSED_AHEAD,
        grouped(1),
        grouped(100),
        grouped(1000),
        GROUP_LIMITED,
      ]) {
        const shape: ClaimShape =
          setting === PAUSED_AHEAD
            ? { ...queuesShape(2, QUEUE), tag: 'paused_ahead' }
            : { tag: setting.tag, text: '', queues: [QUEUE], limit: 1 }
        const latencies = await prepared(fresh, setting, size, (store) => timeClaims(store, shape, claims))
        figures.push({
          key: `claim.${setting.tag}.p50_ms`,
          label: `claim of 1 from ${fmt(size)} ready, ${setting.text}: p50`,
          value: percentile(latencies, 50),
          unit: 'ms',
        })
      }
      const workerRows: [Setting, string][] = [
        [NONE, 'no queue settings'],
        [
          { tag: 'limit5', text: '', control: [{ limit: { queue: QUEUE, concurrency: 5 } }] },
          'queue limited to 5',
        ],
        [
          {
            tag: 'rate2000',
            text: '',
            control: [{ limit: { queue: QUEUE, rate: { limit: 2000, perMs: 1000 } } }],
          },
          'queue rate 2,000/s',
        ],
        [grouped(1000), 'jobs in 1,000 groups'],
        [
          {
            tag: 'groups_1000_c1',
            text: '',
            control: [{ limit: { queue: QUEUE, groupConcurrency: 1 } }],
            groups: 1000,
          },
          'jobs in 1,000 groups, each group limited to 1 at a time',
        ],
      ]
      for (const [setting, text] of workerRows) {
        const seconds = await prepared(fresh, setting, size, (store) =>
          timeNoopWorker(store, size, { concurrency: 10 }),
        )
        figures.push({
          key: `worker.${setting.tag}.jobs_per_s`,
          label: `${fmt(size)} no-op jobs, concurrency 10, ${text}`,
          value: size / seconds,
          unit: '/s',
        })
      }
      return figures
    })
}

/** A fresh store with `size` ready no-op jobs and the setting's control calls made, for fn. */
function prepared<T>(
  fresh: Fresh,
  setting: Setting,
  size: number,
  fn: (store: Store) => Promise<T>,
): Promise<T> {
  return fresh(async ({ store, client }) => {
    await enqueueNoops(client, size, { groups: setting.groups ?? 0 })
    for (const params of setting.control) await store.control(params)
    return fn(store)
  })
}

function scenario(kind: BenchStoreKind, name: string, where: string): ScenarioDef {
  return {
    name,
    store: kind,
    summary: `${where}: claim p50 and no-op jobs at concurrency 10, without queue settings, with a concurrency limit, a rate, behind a paused queue, and with 1 to 1,000 groups`,
    fullSize: 10_000,
    quickSize: 300,
    run: queueControl(kind),
    targets: {},
  }
}

export const queueControlScenario = scenario('sqlite', 'queue-control', 'SQLite (durability full)')
export const postgresQueueControlScenario = scenario('postgres', 'postgres-queue-control', 'PostgreSQL')
export const redisQueueControlScenario = scenario(
  'redis',
  'redis-queue-control',
  `Redis (${REDIS_BENCH_SETUP})`,
)
