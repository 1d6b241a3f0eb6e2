import type { SqliteDurability } from '../../src/sqlite.js'
import type { JobSpec } from '../../src/client/client.js'
import {
  behindForeignShape,
  FOREIGN_NAME,
  OWN_NAME,
  queuesShape,
  timeClaims,
  WARMUP_CLAIMS,
  type ClaimShape,
} from '../lib/claims.js'
import { payloadOfBytes } from '../lib/payload.js'
import { percentile, secondsSince } from '../lib/stats.js'
import { openBenchStore } from '../lib/store.js'
import { withTempDir } from '../lib/temp.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

const PAYLOAD_BYTES = 100
const SETUP_CHUNK = 10_000
/** Scheduled jobs run this far in the future: never due during the benchmark. */
const SCHEDULED_DELAY_MS = 30 * 24 * 3600_000
const QUEUE = 'default'
/** The queue where ready jobs of a name the timed claims do not ask for stand ahead of theirs. */
const MIXED_QUEUE = 'bench-mixed'

const fmt = (n: number): string => n.toLocaleString('en-US')

const ONE: ClaimShape = { tag: 'limit1', text: 'claim limit 1', queues: [QUEUE], limit: 1 }
const TEN: ClaimShape = { tag: 'limit10', text: 'claim limit 10', queues: [QUEUE], limit: 10 }
const MULTI: ClaimShape = {
  tag: '3queues',
  text: 'claim limit 1 over 3 queues (only the last has jobs)',
  queues: queuesShape(3, QUEUE).queues,
  limit: 1,
}
/** The names filter where nothing else stands ahead: its cost against ONE's. */
const NAMED: ClaimShape = {
  tag: 'names',
  text: 'claim limit 1 of its name',
  queues: [QUEUE],
  limit: 1,
  names: [OWN_NAME],
}

/**
 * Claim latency against a big backlog — `size` ready and size/10 scheduled (future) jobs — and a
 * small one (1,000 ready, 100 scheduled at full size): the claim is index-driven, so its cost
 * should not grow with the backlog. The backlogs are built with enqueueMany in chunks of 10,000
 * under durability 'normal' (setup only); each shape is then timed over `claims` claims (after 20
 * untimed warm-up claims) under 'full' — the figure a worker sees, one sync per claim — and
 * again under 'normal', where the sync is gone and what is left is the query itself: the
 * backlog-independence ratios are taken there. Claimed jobs stay active; the small backlog is
 * topped up (untimed) whenever a tenth of it has been claimed, so it stays between 90 and 100%.
 * The big database also holds a queue where size/10 ready jobs of a name the claim does not ask
 * for (ClaimParams.names) stand ahead of its own: a claim with the filter must cost the same there.
 */
export async function claimLatency(size: number): Promise<Figure[]> {
  const bigReady = size
  const smallReady = Math.min(1_000, Math.max(10, Math.round(size / 20)))
  const claims = Math.min(2_000, Math.max(10, Math.round(size / 500)))
  return withTempDir('claim-latency', async (dir) => {
    const figures: Figure[] = []
    const big = `${fmt(bigReady)} ready`
    const small = `${fmt(smallReady)} ready`

    const foreign = Math.round(bigReady / 10)
    const BEHIND = behindForeignShape(MIXED_QUEUE, foreign)
    // Own jobs for every claim of BEHIND, under both durabilities: no top-up needed.
    const mixed = { foreign, own: 2 * (claims + WARMUP_CLAIMS) }
    const setupSeconds = await fill(dir, 'big.db', bigReady, Math.round(bigReady / 10), mixed)
    figures.push({
      key: 'setup_jobs_per_s',
      label: `setup: ${fmt(bigReady + Math.round(bigReady / 10))} jobs (and ${fmt(foreign + mixed.own)} in ${MIXED_QUEUE}), enqueueMany × 10,000 [normal]`,
      value: (bigReady + Math.round(bigReady / 10)) / setupSeconds,
      unit: '/s',
    })
    const bigFull = await measure(dir, 'big.db', 'full', bigReady, claims, [ONE, TEN, MULTI, BEHIND])
    const bigNormal = await measure(dir, 'big.db', 'normal', bigReady, claims, [ONE, MULTI, NAMED, BEHIND])
    await fill(dir, 'small.db', smallReady, Math.round(smallReady / 10))
    const smallFull = await measure(dir, 'small.db', 'full', smallReady, claims, [ONE, TEN])
    const smallNormal = await measure(dir, 'small.db', 'normal', smallReady, claims, [ONE])

    const rows: [string, string, SqliteDurability, Map<ClaimShape, number[]>, ClaimShape][] = [
      ['big', big, 'full', bigFull, ONE],
      ['small', small, 'full', smallFull, ONE],
      ['big', big, 'full', bigFull, TEN],
      ['small', small, 'full', smallFull, TEN],
      ['big', big, 'full', bigFull, MULTI],
      ['big', big, 'full', bigFull, BEHIND],
      ['big', big, 'normal', bigNormal, ONE],
      ['small', small, 'normal', smallNormal, ONE],
      ['big', big, 'normal', bigNormal, MULTI],
      ['big', big, 'normal', bigNormal, NAMED],
      ['big', big, 'normal', bigNormal, BEHIND],
    ]
    for (const [backlogTag, backlogText, durability, results, shape] of rows) {
      const latencies = results.get(shape)!
      for (const p of [50, 99]) {
        figures.push({
          key: `${durability}.${backlogTag}.${shape.tag}.p${p}`,
          label: `${shape.text}, ${backlogText} [${durability}] p${p}`,
          value: percentile(latencies, p),
          unit: 'ms',
        })
      }
    }
    const p50 = (results: Map<ClaimShape, number[]>, shape: ClaimShape): number =>
      percentile(results.get(shape)!, 50)
    figures.push(
      {
        key: 'normal.big_over_small.p50',
        label: `p50 ${big} ÷ p50 ${small}, limit 1 [normal]`,
        value: p50(bigNormal, ONE) / p50(smallNormal, ONE),
        unit: '×',
      },
      {
        key: 'normal.3queues_over_1.p50',
        label: `p50 3 queues ÷ p50 1 queue, ${big} [normal]`,
        value: p50(bigNormal, MULTI) / p50(bigNormal, ONE),
        unit: '×',
      },
      {
        key: 'normal.names_behind_over_1.p50',
        label: `p50 of its name behind ${fmt(foreign)} of another ÷ p50 limit 1 without names, ${big} [normal]`,
        value: p50(bigNormal, BEHIND) / p50(bigNormal, ONE),
        unit: '×',
      },
    )
    return figures
  })
}

/**
 * Builds a backlog under durability 'normal'; returns the seconds spent in enqueueMany. With
 * `mixed`, MIXED_QUEUE gets `foreign` ready jobs of FOREIGN_NAME at priority 1, ahead of `own` of
 * OWN_NAME at priority 0 (untimed).
 */
async function fill(
  dir: string,
  file: string,
  ready: number,
  scheduled: number,
  mixed?: { foreign: number; own: number },
): Promise<number> {
  const bench = await openBenchStore(dir, 'normal', file)
  let seconds = 0
  try {
    if (mixed !== undefined) {
      for (const [name, count, priority] of [
        [FOREIGN_NAME, mixed.foreign, 1],
        [OWN_NAME, mixed.own, 0],
      ] as const) {
        for (let first = 0; first < count; first += SETUP_CHUNK) {
          await bench.client.enqueueMany(
            Array.from({ length: Math.min(SETUP_CHUNK, count - first) }, (_, i) => ({
              name,
              payload: payloadOfBytes(PAYLOAD_BYTES, first + i),
              options: { queue: MIXED_QUEUE, priority },
            })),
          )
        }
      }
    }
    const runAt = Date.now() + SCHEDULED_DELAY_MS
    for (let first = 0; first < ready + scheduled; first += SETUP_CHUNK) {
      const count = Math.min(SETUP_CHUNK, ready + scheduled - first)
      const specs: JobSpec[] = new Array(count)
      for (let i = 0; i < count; i++) {
        const seq = first + i
        specs[i] = {
          name: OWN_NAME,
          payload: payloadOfBytes(PAYLOAD_BYTES, seq),
          options: seq < ready ? { queue: QUEUE } : { queue: QUEUE, runAt },
        }
      }
      const start = process.hrtime.bigint()
      await bench.client.enqueueMany(specs)
      seconds += secondsSince(start)
    }
  } finally {
    await bench.close()
  }
  return seconds
}

/** Opens the database with `durability` and times `claims` claims of each shape, in order. */
async function measure(
  dir: string,
  file: string,
  durability: SqliteDurability,
  backlog: number,
  claims: number,
  shapes: readonly ClaimShape[],
): Promise<Map<ClaimShape, number[]>> {
  const bench = await openBenchStore(dir, durability, file)
  const results = new Map<ClaimShape, number[]>()
  try {
    // The backlog stays between 90 and 100 % of its size: as many jobs put back as were claimed.
    const topUp = {
      every: Math.floor(backlog / 10),
      async fill(count: number) {
        await bench.client.enqueueMany(
          Array.from({ length: count }, (_, k) => ({
            name: OWN_NAME,
            payload: payloadOfBytes(PAYLOAD_BYTES, k),
            options: { queue: QUEUE },
          })),
        )
      },
    }
    for (const shape of shapes) results.set(shape, await timeClaims(bench.store, shape, claims, topUp))
  } finally {
    await bench.close()
  }
  return results
}

export const claimLatencyScenario: ScenarioDef = {
  name: 'claim-latency',
  summary:
    'claim latency p50/p99 with 1,000,000 ready + 100,000 scheduled jobs vs 1,000 ready; limit 1, limit 10, 3 queues, names behind 100,000 of another name',
  fullSize: 1_000_000,
  quickSize: 2_000,
  run: claimLatency,
  targets: {
    'normal.big_over_small.p50': { op: '<=', value: 2 },
    'normal.3queues_over_1.p50': { op: '<=', value: 2 },
    'normal.names_behind_over_1.p50': { op: '<=', value: 2 },
  },
}
