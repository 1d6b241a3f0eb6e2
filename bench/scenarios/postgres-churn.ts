import { chmodSync, readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { createClient } from '../../src/client/client.js'
import { PostgresStore } from '../../src/postgres.js'
import { startChildWorker, type ChildWorker } from '../lib/child-worker.js'
import { startPrivatePostgres, type PrivatePostgres } from '../../tests/support/private-postgres.js'
import { median, percentile } from '../lib/stats.js'
import { runSteadyLoad, type LoadWindow } from '../lib/steady-load.js'
import { withTempDir } from '../lib/temp.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

/** Offered load: about what the third party's harness offered Ferry (510 completions/s). */
const RATE_PER_S = 600
/** 2 `ferry work` processes × 32: 64 job slots, the low end of the harness's 64-128 workers. */
const WORKERS = 2
const CONCURRENCY = 32
/** The JSON payload of every job, as in the enqueue scenarios. */
const PAYLOAD_BYTES = 520
/** Heap pages read by the same-page sample at each window: the newest, where rows change. */
const SAMPLED_PAGES = 32
const MB = 1024 * 1024

/** One way to run the churn: the table's settings, and whether a session holds back vacuum. */
export interface ChurnVariant {
  /** The figure keys' prefix. */
  tag: string
  /**
   * 'ferry': the table as the migrations leave it (migrations/0008_vacuum_that_keeps_up.sql);
   * 'postgres': every storage parameter they set is reset to PostgreSQL's default first.
   */
  tableSettings: 'ferry' | 'postgres'
  /**
   * A session idle in a transaction that holds an xid from `fromShare` to `untilShare` of the run
   * (shares of its length): while it is open, no row version that died after it began can be
   * removed, by vacuum or by pruning, nor its index entries marked dead.
   */
  idleInTransaction?: { fromShare: number; untilShare: number }
  /**
   * Completed jobs put in the table before the load (one INSERT, then VACUUM ANALYZE), as a
   * deployment that keeps its finished jobs has them: autovacuum's scale factors are fractions of
   * the table, so this is where they show.
   */
  prefilledJobs?: number
}

export const DEFAULT_VARIANT: ChurnVariant = { tag: 'default', tableSettings: 'postgres' }
export const FERRY_VARIANT: ChurnVariant = { tag: 'ferry', tableSettings: 'ferry' }
const IDLE = { fromShare: 0.2, untilShare: 0.7 }

/** What the scenario samples at the end of every window, besides the load's own counts. */
interface TableSample {
  /** Seconds since the load started. */
  atS: number
  ready: number
  liveTuples: number
  deadTuples: number
  updates: number
  hotUpdates: number
  autovacuums: number
  autoanalyzes: number
  vacuumRunning: boolean
  heapBytes: number
  totalBytes: number
  readyIndexBytes: number
  activeIndexBytes: number
  /** Of the updated row versions still on the newest pages, how many have their successor on the same page. */
  samePageUpdates: number
  sampledUpdates: number
}

/** Per window, from the jobs table once the run is over: completions and enqueue → finish times. */
interface Completions {
  count: number
  lagP50Ms: number
  lagP99Ms: number
}

/** A report of the server's autovacuum (log_autovacuum_min_duration = 0) on the jobs table. */
interface VacuumReport {
  atS: number
  kind: 'vacuum' | 'analyze'
  text: string
}

/**
 * Churn of the jobs table on a fresh schema, as every new deployment starts: `seconds` of a steady
 * offered load (RATE_PER_S no-op jobs with 520-byte payloads, one enqueue per job, group-committed)
 * worked by WORKERS `ferry work` processes × CONCURRENCY, while a probe in this process times one
 * claim every 50 ms (bench/lib/steady-load.ts). At the end of every window (5 s at full size) it
 * samples what the table looks like: the backlog (ready jobs), pg_stat_user_tables' live and dead
 * tuples and autovacuum/autoanalyze counts, the heap's and the whole relation's size, the ready
 * index's size, and, through pageinspect, of the updated row versions still on the newest
 * SAMPLED_PAGES pages, how many have their new version on the same page (a job's state change
 * cannot be a HOT update: every index is partial on `state`, and a column of an index predicate
 * counts as indexed; a new version can still land on the same page if the page has room for it).
 * Once the load ends it reads, per window, the completions and the enqueue → finish time.
 *
 * On a server of its own with PostgreSQL's defaults (tests/support/private-postgres.ts, durable:
 * autovacuum on, naptime 1 min, fsync on; autovacuum's reports logged), each variant on a fresh schema of it,
 * after a CHECKPOINT: first the defaults, then the table settings in `variants` (interleaved over
 * --runs). The series go to stderr; the figures are per variant.
 */
export async function postgresChurn(seconds: number, variants: readonly ChurnVariant[]): Promise<Figure[]> {
  return withTempDir('postgres-churn', (dir) => postgresChurnIn(dir, seconds, variants))
}

/** postgresChurn with the server's directory given (it must be on the disk the figures are for). */
export async function postgresChurnIn(
  dir: string,
  seconds: number,
  variants: readonly ChurnVariant[],
): Promise<Figure[]> {
  const windowMs = seconds >= 60 ? 5_000 : 1_000
  // Every autovacuum report goes to the log, stamped in UTC: the series places them in the run.
  // As root the server runs as the postgres user, which must be able to pass through this
  // directory (withTempDir makes it 0700) to reach its own.
  chmodSync(dir, 0o711)
  const server = await startPrivatePostgres({
    parentDir: dir,
    durable: true,
    settings: { max_connections: '100', log_autovacuum_min_duration: '0', log_timezone: 'UTC' },
  })
  try {
    const figures: Figure[] = []
    for (const variant of variants) figures.push(...(await churnOnce(server, seconds, windowMs, variant)))
    return figures
  } finally {
    await server.stop()
  }
}

async function churnOnce(
  server: PrivatePostgres,
  seconds: number,
  windowMs: number,
  variant: ChurnVariant,
): Promise<Figure[]> {
  const schema = `ferry_churn_${randomBytes(5).toString('hex')}`
  const storeUrl = new URL(server.url)
  storeUrl.searchParams.set('schema', schema)
  const admin = new pg.Client({ connectionString: server.url })
  await admin.connect()
  const jobs = `"${schema}".jobs`
  const stores: PostgresStore[] = []
  const workers: ChildWorker[] = []
  // The session idle in a transaction (variant.idleInTransaction), while it is open, and when it was.
  const idle: { session: pg.Client | null; span: [number, number] | null } = { session: null, span: null }
  try {
    const open = async (): Promise<PostgresStore> => {
      const store = await PostgresStore.open({ connectionString: server.url, schema })
      stores.push(store)
      return store
    }
    const probeStore = await open()
    const client = createClient({ store: await open() })
    const settingsText = await applyTableSettings(admin, jobs, variant.tableSettings)
    if (variant.prefilledJobs !== undefined) await prefill(admin, schema, variant.prefilledJobs)
    // The same-page sample needs pageinspect (contrib); without it the figure is left out (NaN).
    const pageinspect = await admin.query('CREATE EXTENSION IF NOT EXISTS pageinspect').then(
      () => true,
      () => false,
    )
    // The sampler counts ready jobs through jobs_ready and jobs_grouped (the jobs without a
    // group and the grouped ones, migration 0014), never by reading the whole table.
    await admin.query('SET enable_seqscan = off')
    await admin.query('CHECKPOINT')
    for (let i = 0; i < WORKERS; i++)
      workers.push(
        await startChildWorker({
          storeUrl: storeUrl.toString(),
          concurrency: CONCURRENCY,
          timeLimitMs: seconds * 1000 + 120_000,
        }),
      )
    const [{ now: serverStartMs }] = (
      await admin.query<{ now: string }>(`SELECT "${schema}".now_ms() AS now`)
    ).rows as [{ now: string }]
    const wallStartMs = Date.now()
    const loadAtStart = loadavg()[0]!
    const before = await sampleTable(admin, schema, 0, pageinspect)
    const samples: TableSample[] = []
    const idleFromMs = variant.idleInTransaction
      ? variant.idleInTransaction.fromShare * seconds * 1000
      : Infinity
    const idleUntilMs = variant.idleInTransaction ? variant.idleInTransaction.untilShare * seconds * 1000 : 0
    const { windows, enqueued } = await runSteadyLoad({
      client,
      probeStore,
      ratePerSecond: RATE_PER_S,
      durationMs: seconds * 1000,
      windowMs,
      payloadBytes: PAYLOAD_BYTES,
      onWindow: async (window) => {
        for (const worker of workers) worker.assertAlive()
        samples.push(await sampleTable(admin, schema, window.endMs / 1000, pageinspect))
        // The idle transaction opens and ends on window boundaries, so each window is one or the other.
        if (idle.span === null && window.endMs >= idleFromMs - 1) {
          idle.session = new pg.Client({ connectionString: server.url })
          await idle.session.connect()
          // An xid of its own: every snapshot taken from now on counts it as running.
          await idle.session.query('BEGIN; SELECT pg_current_xact_id()')
          idle.span = [window.endMs / 1000, Infinity]
        } else if (idle.session !== null && window.endMs >= idleUntilMs - 1) {
          await idle.session.query('COMMIT')
          await idle.session.end()
          idle.session = null
          idle.span![1] = window.endMs / 1000
        }
      },
    })
    for (const worker of workers) await worker.stop()
    workers.length = 0
    const loadAtEnd = loadavg()[0]!
    const completions = await completionsPerWindow(
      admin,
      jobs,
      Number(serverStartMs),
      windowMs,
      windows.length,
    )
    const vacuums = vacuumReports(server.logFile, schema, wallStartMs)
    process.stderr.write(
      renderSeries({
        variant,
        settingsText,
        seconds,
        windows,
        samples,
        completions,
        vacuums,
        idleSpan: idle.span,
        loadAtStart,
        loadAtEnd,
      }),
    )
    return summarize(variant, { before, windows, samples, completions, enqueued, seconds })
  } finally {
    for (const worker of workers) await worker.stop()
    await idle.session?.end().catch(() => {})
    for (const store of stores) await store.close().catch(() => {})
    // The server is the run's own and goes with it: a failed drop must not hide why the run failed.
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {})
    await admin.end().catch(() => {})
  }
}

async function sampleTable(
  admin: pg.Client,
  schema: string,
  atS: number,
  pageinspect: boolean,
): Promise<TableSample> {
  const jobs = `"${schema}".jobs`
  const { rows } = await admin.query<Record<string, string | boolean>>(
    `SELECT s.n_live_tup, s.n_dead_tup, s.n_tup_upd, s.n_tup_hot_upd, s.autovacuum_count, s.autoanalyze_count,
            EXISTS (SELECT 1 FROM pg_stat_progress_vacuum AS v WHERE v.relid = s.relid) AS vacuum_running,
            pg_relation_size(s.relid) AS heap_bytes, pg_total_relation_size(s.relid) AS total_bytes,
            pg_relation_size($2::regclass) AS ready_index_bytes, pg_relation_size($3::regclass) AS active_index_bytes,
            (SELECT count(*) FROM ${jobs} AS j WHERE j.state = 'ready' AND j.group_key IS NULL) +
              (SELECT count(*) FROM ${jobs} AS j WHERE j.state = 'ready' AND j.group_key IS NOT NULL) AS ready
     FROM pg_stat_user_tables AS s WHERE s.relid = $1::regclass`,
    [jobs, `"${schema}".jobs_ready`, `"${schema}".jobs_active`],
  )
  const row = rows[0]!
  // An updated version points (t_ctid) at its successor; one only locked (FOR UPDATE) points at itself.
  const { rows: pages } = !pageinspect
    ? { rows: [{ same: '0', updated: '0' }] }
    : await admin.query<{ same: string; updated: string }>(
        `SELECT count(*) FILTER (WHERE (h.t_ctid::text::point)[0] = b.blk) AS same, count(*) AS updated
     FROM (SELECT pg_relation_size($1::regclass) / 8192 AS pages) AS r,
          generate_series(greatest(0, r.pages - $2), r.pages - 1) AS b(blk),
          heap_page_items(get_raw_page($1::text, b.blk)) AS h
     WHERE h.lp_flags = 1 AND h.t_xmax <> '0'::xid AND h.t_ctid <> format('(%s,%s)', b.blk, h.lp)::tid`,
        [jobs, SAMPLED_PAGES],
      )
  return {
    atS,
    ready: Number(row.ready),
    liveTuples: Number(row.n_live_tup),
    deadTuples: Number(row.n_dead_tup),
    updates: Number(row.n_tup_upd),
    hotUpdates: Number(row.n_tup_hot_upd),
    autovacuums: Number(row.autovacuum_count),
    autoanalyzes: Number(row.autoanalyze_count),
    vacuumRunning: row.vacuum_running === true,
    heapBytes: Number(row.heap_bytes),
    totalBytes: Number(row.total_bytes),
    readyIndexBytes: Number(row.ready_index_bytes),
    activeIndexBytes: Number(row.active_index_bytes),
    samePageUpdates: Number(pages[0]!.same),
    sampledUpdates: Number(pages[0]!.updated),
  }
}

/** `count` completed jobs with the load's payload size, finished a day ago, then VACUUM ANALYZE. */
async function prefill(admin: pg.Client, schema: string, count: number): Promise<void> {
  const jobs = `"${schema}".jobs`
  await admin.query(
    `INSERT INTO ${jobs} (queue, name, payload, state, priority, run_at, attempts, max_attempts, created_at,
                          updated_at, finished_at)
     SELECT 'default', 'bench.noop', '{"seq":' || g || ',"pad":"' || repeat('x', $2::integer) || '"}', 'completed',
            0, t.at, 1, 25, t.at, t.at, t.at
     FROM generate_series(1, $1::integer) AS g, (SELECT "${schema}".now_ms() - 86400000 AS at) AS t`,
    [count, PAYLOAD_BYTES - JSON.stringify({ seq: 1000000, pad: '' }).length],
  )
  // The insert's counts reach pg_stat_user_tables now, not after VACUUM has set the live count.
  await admin.query('SELECT pg_stat_force_next_flush()')
  await admin.query(`VACUUM ANALYZE ${jobs}`)
}

/** Completions per window (by finished_at, the server's clock) and their enqueue → finish times. */
async function completionsPerWindow(
  admin: pg.Client,
  jobs: string,
  serverStartMs: number,
  windowMs: number,
  windowCount: number,
): Promise<Completions[]> {
  const { rows } = await admin.query<{ w: number; count: string; p50: string; p99: string }>(
    `SELECT floor((j.finished_at - $1::bigint) / $2::numeric)::integer AS w, count(*) AS count,
            percentile_disc(0.5) WITHIN GROUP (ORDER BY j.finished_at - j.created_at) AS p50,
            percentile_disc(0.99) WITHIN GROUP (ORDER BY j.finished_at - j.created_at) AS p99
     FROM ${jobs} AS j
     WHERE j.state = 'completed' AND j.finished_at >= $1::bigint AND j.finished_at < $1::bigint + $2::bigint * $3::integer
     GROUP BY 1`,
    [serverStartMs, windowMs, windowCount],
  )
  const result: Completions[] = Array.from({ length: windowCount }, () => ({
    count: 0,
    lagP50Ms: 0,
    lagP99Ms: 0,
  }))
  for (const row of rows)
    result[row.w] = { count: Number(row.count), lagP50Ms: Number(row.p50), lagP99Ms: Number(row.p99) }
  return result
}

/** The server log's autovacuum reports on this schema's jobs table, each reduced to its figures. */
function vacuumReports(logFile: string, schema: string, wallStartMs: number): VacuumReport[] {
  const log = readFileSync(logFile, 'utf8')
  const reports: VacuumReport[] = []
  const entry = new RegExp(
    `^(\\S+ \\S+) \\S+ \\[\\d+\\] LOG:  automatic (vacuum|analyze) of table "[^"]*\\.${schema}\\.jobs"(.*(?:\\n\\t.*)*)`,
    'gm',
  )
  for (const match of log.matchAll(entry)) {
    const atS = (Date.parse(`${match[1]!.replace(' ', 'T')}Z`) - wallStartMs) / 1000
    const body = match[3]!
    const pick = (pattern: RegExp): string => pattern.exec(body)?.[1] ?? '?'
    const text =
      match[2] === 'vacuum'
        ? `removed ${pick(/tuples: (\d+) removed/)}, ${pick(/(\d+) are dead but not yet removable/)} dead not yet ` +
          `removable, ${pick(/tuples: \d+ removed, (\d+) remain/)} remain, index scans ${pick(/index scans: (\d+)/)}, ` +
          `elapsed ${pick(/elapsed: ([\d.]+ s)/)}`
        : `elapsed ${pick(/elapsed: ([\d.]+ s)/)}`
    reports.push({ atS, kind: match[2] as 'vacuum' | 'analyze', text })
  }
  return reports
}

interface SeriesInput {
  variant: ChurnVariant
  settingsText: string
  seconds: number
  windows: readonly LoadWindow[]
  samples: readonly TableSample[]
  completions: readonly Completions[]
  vacuums: readonly VacuumReport[]
  idleSpan: [number, number] | null
  loadAtStart: number
  loadAtEnd: number
}

/** One line per window, then the autovacuum reports and the peaks, for stderr. */
function renderSeries(input: SeriesInput): string {
  const { variant, windows, samples, completions, vacuums, idleSpan } = input
  const mb = (bytes: number): string => (bytes / MB).toFixed(1)
  const k = (n: number): string => (n >= 10_000 ? `${(n / 1000).toFixed(0)}k` : String(n))
  const lines = [
    ``,
    `-- postgres-churn, ${input.settingsText}: ${input.seconds} s at ${RATE_PER_S} jobs/s offered, ` +
      `${WORKERS} × ferry work --concurrency ${CONCURRENCY}; load average ${input.loadAtStart.toFixed(2)} at start, ` +
      `${input.loadAtEnd.toFixed(2)} at end` +
      (idleSpan === null
        ? ''
        : `; a session idle in a transaction from ${idleSpan[0].toFixed(0)} s to ${idleSpan[1].toFixed(0)} s`) +
      (variant.prefilledJobs === undefined
        ? ''
        : `; ${variant.prefilledJobs.toLocaleString('en-US')} completed jobs before`),
    `   t  done/s  ready  claim p50/p99 ms  lag p50/p99 ms     live     dead  heap MB  total MB  ready/active idx MB  same-page  av aa`,
  ]
  for (const window of windows) {
    const sample = samples[window.index]
    const done = completions[window.index]!
    if (sample === undefined) continue
    const seconds = (window.endMs - (window.index === 0 ? 0 : windows[window.index - 1]!.endMs)) / 1000
    const claims = window.claimMs.length === 0 ? [NaN] : window.claimMs
    lines.push(
      [
        sample.atS.toFixed(0).padStart(4),
        (done.count / seconds).toFixed(0).padStart(7),
        k(sample.ready).padStart(6),
        `${percentile(claims, 50).toFixed(1)}/${percentile(claims, 99).toFixed(1)}`.padStart(17),
        `${done.lagP50Ms}/${done.lagP99Ms}`.padStart(15),
        k(sample.liveTuples).padStart(8),
        k(sample.deadTuples).padStart(8),
        mb(sample.heapBytes).padStart(8),
        mb(sample.totalBytes).padStart(9),
        `${mb(sample.readyIndexBytes)}/${mb(sample.activeIndexBytes)}`.padStart(20),
        (sample.sampledUpdates === 0
          ? '-'
          : `${Math.round((100 * sample.samePageUpdates) / sample.sampledUpdates)}%`
        ).padStart(10),
        `${sample.autovacuums} ${sample.autoanalyzes}${sample.vacuumRunning ? ' vacuuming' : ''}`.padStart(6),
      ].join(' '),
    )
  }
  for (const report of vacuums)
    lines.push(`   autovacuum at ${report.atS.toFixed(0)} s: ${report.kind}, ${report.text}`)
  const last = samples[samples.length - 1]
  if (last !== undefined) {
    const peak = (pick: (s: TableSample) => number): number => Math.max(...samples.map(pick))
    lines.push(
      `   peaks: dead tuples ${peak((s) => s.deadTuples).toLocaleString('en-US')}, backlog ${peak((s) => s.ready).toLocaleString('en-US')}, ` +
        `heap ${mb(peak((s) => s.heapBytes))} MB, total ${mb(peak((s) => s.totalBytes))} MB; final heap ${mb(last.heapBytes)} MB, ` +
        `total ${mb(last.totalBytes)} MB, ready index ${mb(last.readyIndexBytes)} MB, active index ${mb(last.activeIndexBytes)} MB; ` +
        `HOT updates ${last.hotUpdates} of ${last.updates.toLocaleString('en-US')}`,
    )
  }
  return `${lines.join('\n')}\n`
}

function summarize(
  variant: ChurnVariant,
  run: {
    before: TableSample
    windows: readonly LoadWindow[]
    samples: readonly TableSample[]
    completions: readonly Completions[]
    enqueued: number
    seconds: number
  },
): Figure[] {
  const { before, windows, samples, completions, enqueued, seconds } = run
  const tag = variant.tag
  const text = `[${variant.tableSettings === 'ferry' ? "Ferry's table settings" : "PostgreSQL's defaults"}${variant.idleInTransaction ? ', a session idle in a transaction' : ''}${
    variant.prefilledJobs === undefined
      ? ''
      : `, ${variant.prefilledJobs.toLocaleString('en-US')} completed jobs before`
  }]`
  const p = (window: LoadWindow | undefined, q: number): number =>
    window === undefined || window.claimMs.length === 0 ? NaN : percentile(window.claimMs, q)
  const peak = (pick: (s: TableSample) => number): number => Math.max(0, ...samples.map(pick))
  const last = samples[samples.length - 1]!
  const sampledUpdates = samples.reduce((sum, s) => sum + s.sampledUpdates, 0)
  const samePage = samples.reduce((sum, s) => sum + s.samePageUpdates, 0)
  const completed = completions.reduce((sum, c) => sum + c.count, 0)
  return [
    {
      key: `${tag}.completed_per_s`,
      label: `jobs completed/s (${RATE_PER_S}/s offered) ${text}`,
      value: completed / seconds,
      unit: '/s',
    },
    {
      key: `${tag}.claim_p99_first`,
      label: `claim p99, first window ${text}`,
      value: p(windows[0], 99),
      unit: 'ms',
    },
    {
      key: `${tag}.claim_p99_last`,
      label: `claim p99, last window ${text}`,
      value: p(windows[windows.length - 1], 99),
      unit: 'ms',
    },
    {
      key: `${tag}.claim_p50_last`,
      label: `claim p50, last window ${text}`,
      value: p(windows[windows.length - 1], 50),
      unit: 'ms',
    },
    {
      key: `${tag}.claim_p99_worst`,
      label: `claim p99, worst window ${text}`,
      value: Math.max(...windows.map((w) => p(w, 99))),
      unit: 'ms',
    },
    {
      key: `${tag}.lag_p99_worst`,
      label: `enqueue → completed p99, worst window ${text}`,
      value: Math.max(...completions.map((c) => c.lagP99Ms)),
      unit: 'ms',
    },
    {
      key: `${tag}.backlog_peak_s`,
      label: `peak backlog (ready jobs), in seconds of offered load ${text}`,
      value: peak((s) => s.ready) / RATE_PER_S,
      unit: 's',
      mayBeZero: true,
    },
    {
      key: `${tag}.dead_over_live_median`,
      label: `dead ÷ live tuples (pg_stat_user_tables), median of the windows ${text}`,
      value: median(samples.map((s) => s.deadTuples / Math.max(1, s.liveTuples))),
      unit: '×',
    },
    {
      key: `${tag}.heap_growth`,
      label: `heap growth ÷ jobs enqueued ${text}`,
      value: (last.heapBytes - before.heapBytes) / enqueued,
      unit: 'B/job',
    },
    {
      key: `${tag}.total_growth`,
      label: `table + indexes + TOAST growth ÷ jobs enqueued ${text}`,
      value: (last.totalBytes - before.totalBytes) / enqueued,
      unit: 'B/job',
    },
    {
      key: `${tag}.autovacuums`,
      label: `autovacuums of the jobs table during the run ${text}`,
      value: last.autovacuums,
      unit: '×',
      mayBeZero: true,
    },
    {
      key: `${tag}.same_page_pct`,
      label: `updated versions on the newest pages whose successor is on the same page ${text}`,
      value: sampledUpdates === 0 ? NaN : (100 * samePage) / sampledUpdates,
      unit: '%',
      mayBeZero: true,
    },
    {
      key: `${tag}.hot_pct`,
      label: `HOT updates, % of updates ${text}`,
      value: last.updates === 0 ? 0 : (100 * last.hotUpdates) / last.updates,
      unit: '%',
      mayBeZero: true,
    },
  ]
}

/**
 * Leaves the table as the migrations made it ('ferry'), or resets every storage parameter they set
 * ('postgres'); returns what the table then has, for the labels: `av_vacuum_scale_factor=0.01 …`,
 * or "PostgreSQL defaults".
 */
async function applyTableSettings(
  admin: pg.Client,
  jobs: string,
  settings: ChurnVariant['tableSettings'],
): Promise<string> {
  const reloptions = async (): Promise<string[]> => {
    const { rows } = await admin.query<{ options: string[] | null }>(
      'SELECT reloptions AS options FROM pg_class WHERE oid = $1::regclass',
      [jobs],
    )
    return rows[0]?.options ?? []
  }
  const migrated = await reloptions()
  if (settings === 'postgres' && migrated.length > 0)
    await admin.query(
      `ALTER TABLE ${jobs} RESET (${migrated.map((option) => option.split('=')[0]).join(', ')})`,
    )
  const now = await reloptions()
  if (now.length === 0) return 'PostgreSQL defaults'
  return `Ferry's: ${now.map((option) => option.replace(/^autovacuum_/, 'av_')).join(' ')}`
}

/** Runs so far in this process: each run takes the variants in the other order than the last. */
let runsSoFar = 0

/** PostgreSQL's and Ferry's, alternating which goes first from one run to the next (--runs interleaves). */
function bothOrders(seconds: number, defaults: ChurnVariant, ferry: ChurnVariant): Promise<Figure[]> {
  const variants = runsSoFar++ % 2 === 0 ? [defaults, ferry] : [ferry, defaults]
  return postgresChurn(seconds, variants)
}

export const postgresChurnScenario: ScenarioDef = {
  name: 'postgres-churn',
  store: 'postgres',
  summary: `PostgreSQL, own server: a fresh jobs table, ${RATE_PER_S} jobs/s for 4 min; PostgreSQL's table settings vs Ferry's`,
  fullSize: 240,
  quickSize: 4,
  run: (seconds) => bothOrders(seconds, DEFAULT_VARIANT, FERRY_VARIANT),
  targets: {},
}

/** 1,000,000 completed jobs: 28 min of this load, or a day of 12 jobs/s, kept. */
const AGED_JOBS = 1_000_000

export const postgresChurnAgedScenario: ScenarioDef = {
  name: 'postgres-churn-aged',
  store: 'postgres',
  summary: `postgres-churn on a table already holding ${AGED_JOBS.toLocaleString('en-US')} completed jobs`,
  fullSize: 240,
  quickSize: 4,
  run: (seconds) => {
    const prefilledJobs = seconds >= 60 ? AGED_JOBS : 2_000
    return bothOrders(seconds, { ...DEFAULT_VARIANT, prefilledJobs }, { ...FERRY_VARIANT, prefilledJobs })
  },
  targets: {},
}

export const postgresChurnIdleScenario: ScenarioDef = {
  name: 'postgres-churn-idle',
  store: 'postgres',
  summary: 'postgres-churn with a session idle in a transaction from 20 % to 70 % of the run',
  fullSize: 240,
  quickSize: 4,
  run: (seconds) =>
    bothOrders(
      seconds,
      { ...DEFAULT_VARIANT, idleInTransaction: IDLE },
      { ...FERRY_VARIANT, idleInTransaction: IDLE },
    ),
  targets: {},
}
