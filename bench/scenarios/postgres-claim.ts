import pg from 'pg'
import {
  behindForeignShape,
  FOREIGN_NAME,
  OWN_NAME,
  queuesShape,
  timeClaims,
  WARMUP_CLAIMS,
  type ClaimShape,
} from '../lib/claims.js'
import { BENCH_POSTGRES_URL, withBenchSchema, type BenchSchema } from '../lib/postgres.js'
import { percentile, secondsSince } from '../lib/stats.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

const QUEUE = 'default'
/** The queue where ready jobs of a name the timed claims do not ask for stand ahead of theirs. */
const MIXED_QUEUE = 'bench-mixed'
const QUEUE_COUNTS = [1, 5, 20, 100] as const
const fmt = (n: number): string => n.toLocaleString('en-US')

const ONE = queuesShape(1, QUEUE)
/** The store's connections commit without waiting for the flush (the server's setting, per session). */
const RELAXED = { options: '-c synchronous_commit=off' }
const TEN: ClaimShape = { tag: 'limit10', text: 'claim limit 10', queues: [QUEUE], limit: 10 }
/** The names filter where nothing else stands ahead: its cost against ONE's. */
const NAMED: ClaimShape = {
  tag: 'names',
  text: 'claim limit 1 of its name',
  queues: [QUEUE],
  limit: 1,
  names: [OWN_NAME],
}

/**
 * Claim cost on PostgreSQL against a big backlog — `size` ready jobs plus size/10 scheduled in the
 * future, inserted by one INSERT … SELECT generate_series (setup) and ANALYZEd — and a small one
 * (1,000 ready, topped up as it is claimed). Each shape is timed over `claims` store.claim calls
 * (one round trip each, after 20 untimed) on a store of its own: limit 1 and 10 on both backlogs,
 * then limit 1 over 1, 5, 20 and 100 queues where only the last has jobs. Claimed jobs stay active.
 * The plans of the claim's statements at the big backlog are printed on stderr (auto_explain).
 * Then again on connections with synchronous_commit=off, for reference: the claim's commit no
 * longer waits for its WAL flush, and what is left is the query, whose growth with the backlog
 * and the queue count the ratios are taken on. The big backlog also has a queue where size/10
 * ready jobs of a name the claim does not ask for (ClaimParams.names) stand ahead of its own: a
 * claim with the filter must cost the same there.
 */
export async function postgresClaim(size: number): Promise<Figure[]> {
  const claims = Math.min(2_000, Math.max(10, Math.round(size / 500)))
  const smallReady = Math.min(1_000, Math.max(10, Math.round(size / 20)))
  const figures: Figure[] = []
  const big = `${fmt(size)} ready`
  const foreign = Math.round(size / 10)
  const BEHIND = behindForeignShape(MIXED_QUEUE, foreign)
  const bigResults = await withBenchSchema(async (bench) => {
    const store = await bench.open()
    const start = process.hrtime.bigint()
    // Own jobs for every claim of BEHIND, on both connections' settings: no top-up needed.
    const own = 2 * (claims + WARMUP_CLAIMS) + 10 // and 8 for the EXPLAIN
    await fillMixed(bench, foreign, own)
    await fill(bench, size, Math.round(size / 10))
    figures.push({
      key: 'setup_s',
      label: `setup: ${fmt(size + Math.round(size / 10))} jobs (and ${fmt(foreign + own)} in ${MIXED_QUEUE}) by INSERT … generate_series, ANALYZE`,
      value: secondsSince(start),
      unit: 's',
    })
    const results = new Map<ClaimShape, number[]>()
    for (const shape of [
      ONE,
      TEN,
      ...QUEUE_COUNTS.slice(1).map((count) => queuesShape(count, QUEUE)),
      BEHIND,
    ]) {
      results.set(shape, await timeClaims(store, shape, claims))
    }
    // The same claims without waiting for the commit's flush: what is left is the query itself.
    const relaxedStore = await bench.open(RELAXED)
    const relaxed = new Map<ClaimShape, number[]>()
    for (const shape of [ONE, queuesShape(100, QUEUE), NAMED, BEHIND])
      relaxed.set(shape, await timeClaims(relaxedStore, shape, claims))
    process.stderr.write(await explainClaim(bench))
    return { results, relaxed }
  })
  const smallResults = await withBenchSchema(async (bench) => {
    const store = await bench.open()
    await fill(bench, smallReady, Math.round(smallReady / 10))
    // The small backlog stays between 90 and 100 % of its size, topped up as it is claimed.
    const topUp = { every: Math.floor(smallReady / 10), fill: (count: number) => fill(bench, count, 0) }
    const results = new Map<ClaimShape, number[]>()
    for (const shape of [ONE, TEN]) results.set(shape, await timeClaims(store, shape, claims, topUp))
    const relaxed = new Map<ClaimShape, number[]>()
    relaxed.set(ONE, await timeClaims(await bench.open(RELAXED), ONE, claims, topUp))
    return { results, relaxed }
  })
  const small = `${fmt(smallReady)} ready`
  const p50 = (results: Map<ClaimShape, number[]>, tag: string): number =>
    percentile([...results.entries()].find(([shape]) => shape.tag === tag)![1], 50)
  for (const [tag, text, results, mode] of [
    ['big', big, bigResults.results, ''],
    ['small', small, smallResults.results, ''],
    ['big', big, bigResults.relaxed, 'relaxed.'],
    ['small', small, smallResults.relaxed, 'relaxed.'],
  ] as const) {
    for (const [shape, latencies] of results) {
      for (const p of [50, 99]) {
        figures.push({
          key: `${mode}${tag}.${shape.tag}.p${p}`,
          label: `${shape.text}, ${text} [postgres${mode === '' ? '' : ', synchronous_commit=off'}] p${p}`,
          value: percentile(latencies, p),
          unit: 'ms',
        })
      }
    }
  }
  figures.push(
    {
      key: 'relaxed.big_over_small.p50',
      label: `p50 ${big} ÷ p50 ${small}, limit 1 [postgres, synchronous_commit=off]`,
      value: p50(bigResults.relaxed, 'q1') / p50(smallResults.relaxed, 'q1'),
      unit: '×',
    },
    {
      key: 'relaxed.q100_over_q1.p50',
      label: `p50 100 queues ÷ p50 1 queue, ${big} [postgres, synchronous_commit=off]`,
      value: p50(bigResults.relaxed, 'q100') / p50(bigResults.relaxed, 'q1'),
      unit: '×',
    },
    {
      key: 'relaxed.names_behind_over_1.p50',
      label: `p50 of its name behind ${fmt(foreign)} of another ÷ p50 limit 1 without names, ${big} [postgres, synchronous_commit=off]`,
      value: p50(bigResults.relaxed, 'names_behind') / p50(bigResults.relaxed, 'q1'),
      unit: '×',
    },
  )
  return figures
}

/**
 * MIXED_QUEUE: `foreign` ready jobs of FOREIGN_NAME at priority 1, ahead of `own` of OWN_NAME at
 * priority 0, in one statement (fill's ANALYZE follows).
 */
async function fillMixed(bench: BenchSchema, foreign: number, own: number): Promise<void> {
  const s = `"${bench.schema}"`
  await bench.admin(
    `INSERT INTO ${s}.jobs (queue, name, payload, state, priority, run_at, max_attempts, created_at, updated_at)
     SELECT $1, CASE WHEN g <= $2 THEN $4 ELSE $5 END, '{"seq":' || g || ',"pad":"' || repeat('x', 80) || '"}',
            'ready', CASE WHEN g <= $2 THEN 1 ELSE 0 END, t.now, 25, t.now, t.now
     FROM generate_series(1, $2::integer + $3::integer) AS g, (SELECT ${s}.now_ms() AS now) AS t`,
    [MIXED_QUEUE, foreign, own, FOREIGN_NAME, OWN_NAME],
  )
}

/** `ready` jobs ready now and `scheduled` a month ahead, in one statement, then ANALYZE. */
async function fill(bench: BenchSchema, ready: number, scheduled: number): Promise<void> {
  const s = `"${bench.schema}"`
  await bench.admin(
    `INSERT INTO ${s}.jobs (queue, name, payload, state, priority, run_at, max_attempts, created_at, updated_at)
     SELECT $1, '${OWN_NAME}', '{"seq":' || g || ',"pad":"' || repeat('x', 80) || '"}',
            CASE WHEN g <= $2 THEN 'ready' ELSE 'scheduled' END, 0,
            CASE WHEN g <= $2 THEN t.now ELSE t.now + 2592000000::bigint END, 25, t.now, t.now
     FROM generate_series(1, $2::integer + $3::integer) AS g, (SELECT ${s}.now_ms() AS now) AS t`,
    [QUEUE, ready, scheduled],
  )
  await bench.admin(`ANALYZE ${s}.jobs`)
}

/** EXPLAIN ANALYZE of the statements inside the claim function, through auto_explain's notices. */
async function explainClaim(bench: BenchSchema): Promise<string> {
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL })
  await client.connect()
  const notices: string[] = []
  client.on('notice', (notice) => notices.push(notice.message ?? ''))
  try {
    await client.query(`LOAD 'auto_explain'`)
    await client.query(`SET auto_explain.log_min_duration = 0`)
    await client.query(`SET auto_explain.log_analyze = on`)
    await client.query(`SET auto_explain.log_buffers = on`)
    await client.query(`SET auto_explain.log_nested_statements = on`)
    await client.query(`SET auto_explain.log_level = notice`)
    const sql = `SELECT id FROM "${bench.schema}".claim($1::text[], $2::integer, $3::bigint, $4::text, NULL, false, $5::text[])`
    // The plan a worker runs after many calls (plpgsql may switch to a generic plan after five).
    for (let i = 0; i < 8; i++) {
      notices.length = 0
      await client.query(sql, [queuesShape(100, QUEUE).queues, 10, 60_000, 'explain', null])
    }
    const plain = notices.join('\n\n')
    for (let i = 0; i < 8; i++) {
      notices.length = 0
      await client.query(sql, [[MIXED_QUEUE], 1, 60_000, 'explain', [OWN_NAME]])
    }
    return (
      `\n-- claim of 10 over 100 queues (only the last has jobs), plans of its statements:\n${plain}\n\n` +
      `-- claim of 1 of ${OWN_NAME} in ${MIXED_QUEUE}, behind jobs of ${FOREIGN_NAME}, plans of its statements:\n${notices.join('\n\n')}\n\n`
    )
  } catch (error) {
    return `\n-- EXPLAIN of the claim unavailable: ${(error as Error).message}\n`
  } finally {
    await client.end()
  }
}

export const postgresClaimScenario: ScenarioDef = {
  name: 'postgres-claim',
  store: 'postgres',
  summary:
    'PostgreSQL: claim latency at 1,000,000 ready jobs vs 1,000, over 1/5/20/100 queues, and of one name behind 100,000 of another',
  fullSize: 1_000_000,
  quickSize: 2_000,
  run: postgresClaim,
  targets: {},
}
