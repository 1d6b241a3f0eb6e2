import pg from 'pg'
import { sql } from '../../src/store/postgres/generated/assets.js'
import { BENCH_POSTGRES_URL, withBenchSchema, type BenchSchema } from '../lib/postgres.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

const LEASE_MS = 60_000
/** Calls of each statement before the one whose plan is printed: PL/pgSQL may switch a statement
 * to a generic plan after five, and a busy worker runs that one. */
const CALLS_BEFORE = 7
/** Jobs per claim, settle, renew and enqueue batch. */
const BATCH = 10
const fmt = (n: number): string => n.toLocaleString('en-US')

/** A hot statement, called as the store calls it (src/store/postgres/sql/*.sql). */
interface HotStatement {
  tag: string
  text: string
  /** Runs one call on `db`; the plans of its statements arrive as auto_explain's notices. */
  call(db: Session): Promise<void>
}

/** What a call needs: the connection the plans are taken on, and the schema's name in SQL. */
interface Session {
  client: pg.Client
  /** `"<schema>"`, to prefix the schema's tables and functions. */
  s: string
  /** A number unique to this call (fresh unique keys, waiter ids). */
  seq: number
  /** A second connection, holding the advisory lock of a live waiter's listening connection. */
  waiterLockKey: string
}

interface Leased {
  id: string
  lease_token: string
  lease_expires_at: string
}

/** The store's own text of a statement (src/store/postgres/sql/<name>.sql), for this schema. */
function storeSql(db: Session, name: keyof typeof sql): string {
  return sql[name].replaceAll(':"schema"', db.s)
}

async function claim(db: Session, queue: string, delivered = false): Promise<Leased[]> {
  const { rows } = await db.client.query<Leased>(
    `SELECT id::text, lease_token, lease_expires_at::text FROM ${db.s}.claim($1::text[], $2, $3, 'plans', NULL, 'plans', $4)`,
    [[queue], BATCH, LEASE_MS, delivered],
  )
  return rows
}

/**
 * A statement on the jobs a claim just leased: the claim's plans are printed too, but a marker
 * statement after it keeps only the plans of the statement's own call for its figures.
 */
function onClaimedJobs(
  args: (jobs: Leased[]) => unknown[],
  name: keyof typeof sql,
  { delivered = false }: { delivered?: boolean } = {},
): HotStatement['call'] {
  return async (db) => {
    const jobs = await claim(db, 'default', delivered)
    await db.client.query('SELECT 1 AS plans_of_the_setup_end_here')
    await db.client.query(storeSql(db, name), args(jobs))
  }
}

function enqueueArgs(queue: string, uniqueKeys: (string | null)[]): unknown[] {
  const n = uniqueKeys.length
  const fill = <T>(value: T): T[] => Array.from({ length: n }, () => value)
  return [
    fill(queue),
    fill('bench.plans'),
    fill('{"pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}'),
    fill(0),
    fill(null),
    fill(0),
    fill(25),
    fill(null),
    uniqueKeys,
    // No job of the batch has a group, a start deadline or meta: those columns go as NULL, as the
    // store sends them.
    null,
    null,
    null,
    null,
    // now, and the lease tokens' base
    null,
    'plans',
    // No key of the batch has a mode, a throttle window or a debounce: they go as NULL, as the
    // store sends them.
    null,
    null,
    null,
  ]
}

const ids = (jobs: Leased[]): string[] => jobs.map((j) => j.id)
const tokens = (jobs: Leased[]): string[] => jobs.map((j) => j.lease_token)

/**
 * The statements of the worker's and the producer's hot paths, each as the store sends it (its
 * text from sql/). Those that need leased jobs claim them first, on the same connection.
 */
const STATEMENTS: readonly HotStatement[] = [
  {
    tag: 'enqueue',
    text: `enqueue_batch of ${BATCH} jobs, no unique keys (sql/enqueue.sql)`,
    call: async (db) =>
      void (await db.client.query(storeSql(db, 'enqueue'), enqueueArgs('default', Array(BATCH).fill(null)))),
  },
  {
    tag: 'enqueue_unique',
    text: `enqueue_batch of ${BATCH} jobs with unique keys`,
    call: async (db) =>
      void (await db.client.query(
        storeSql(db, 'enqueue'),
        enqueueArgs(
          'default',
          Array.from({ length: BATCH }, (_, i) => `plans-${db.seq}-${i}`),
        ),
      )),
  },
  {
    tag: 'claim',
    text: `claim of ${BATCH} (sql/claim.sql)`,
    call: async (db) =>
      void (await db.client.query(storeSql(db, 'claim'), [
        ['default'],
        BATCH,
        LEASE_MS,
        'plans',
        null,
        'plans',
        null,
      ])),
  },
  {
    tag: 'claim_named',
    text: `claim of ${BATCH}, only the names a worker handles (sql/claim.sql with names)`,
    call: async (db) =>
      void (await db.client.query(storeSql(db, 'claim'), [
        ['default'],
        BATCH,
        LEASE_MS,
        'plans',
        null,
        'plans',
        ['bench.plans', 'bench.other'],
      ])),
  },
  {
    tag: 'settle',
    text: `settle of ${BATCH} completed (sql/settle.sql)`,
    call: onClaimedJobs((jobs) => [...settleArgs(jobs), null, null, null], 'settle'),
  },
  {
    tag: 'settle_and_claim',
    text: `settle_and_claim: ${BATCH} completed, claim of ${BATCH} (sql/settle-with-claim.sql)`,
    call: onClaimedJobs(
      (jobs) => [...settleArgs(jobs), ['default'], BATCH, LEASE_MS, 'plans', null, 'plans', null, null, null],
      'settle-with-claim',
    ),
  },
  {
    tag: 'renew',
    text: `renew of ${BATCH} leases (sql/renew.sql)`,
    call: onClaimedJobs((jobs) => [ids(jobs), tokens(jobs), LEASE_MS, null, false, null, null], 'renew'),
  },
  {
    tag: 'renew_delivered',
    text: `renew of ${BATCH} delivered jobs, the take (sql/renew.sql with delivered)`,
    call: onClaimedJobs((jobs) => [ids(jobs), tokens(jobs), LEASE_MS, null, true, null, null], 'renew', {
      delivered: true,
    }),
  },
  {
    tag: 'find_expired',
    text: 'find expired leases, the recoverer’s look (sql/find-expired-leases.sql)',
    call: async (db) => void (await db.client.query(storeSql(db, 'find-expired-leases'), [null, 100])),
  },
  {
    tag: 'recover_any',
    text: 'recover_expired, any expired lease (sql/recover-expired.sql, ids NULL)',
    call: async (db) =>
      void (await db.client.query(storeSql(db, 'recover-expired'), [null, 100, null, null, null])),
  },
  {
    tag: 'recover_given',
    text: `recover_expired of ${BATCH} given leases (not expired: nothing moves)`,
    call: onClaimedJobs(
      (jobs) => [null, 100, ids(jobs), tokens(jobs), jobs.map((j) => j.lease_expires_at)],
      'recover-expired',
    ),
  },
  {
    tag: 'wait_for_work',
    text: 'wait_for_work, a look at one queue (sql/wait-for-work.sql, no waiter id)',
    call: async (db) =>
      void (await db.client.query(storeSql(db, 'wait-for-work'), [
        ['default'],
        null,
        null,
        null,
        null,
        null,
        null,
        null,
      ])),
  },
  {
    tag: 'deliver',
    text: `enqueue_batch of ${BATCH} jobs handed to a registered waiter (deliver, claim inside)`,
    call: async (db) => {
      // A live waiter on a queue of its own (empty, so it registers): its key is held elsewhere.
      await db.client.query(storeSql(db, 'wait-for-work'), [
        ['plans-deliver'],
        `waiter-${db.seq}`,
        BATCH,
        LEASE_MS,
        'plans-waiter',
        'ferry:plans',
        db.waiterLockKey,
        null,
      ])
      await db.client.query('SELECT 1 AS plans_of_the_setup_end_here')
      await db.client.query(storeSql(db, 'enqueue'), enqueueArgs('plans-deliver', Array(BATCH).fill(null)))
    },
  },
]

function settleArgs(jobs: Leased[]): unknown[] {
  return [
    jobs.map((j) => j.id),
    jobs.map((j) => j.lease_token),
    jobs.map(() => 'completed'),
    jobs.map(() => null),
    jobs.map(() => null),
    jobs.map(() => null),
  ]
}

/** The plans of one statement's last call, and what they read the jobs table with. */
interface Plans {
  text: string
  /** How its plans read the tables (accessPaths), in plan order, without repeats. */
  access: string[]
  /** The call's own duration (the outermost statement's), ms. */
  durationMs: number
}

/**
 * The plan of every hot statement through auto_explain (LOAD 'auto_explain', log_analyze,
 * log_buffers, log_nested_statements, log_level notice: the plans of the statements inside the
 * functions arrive as notices on the connection), on an empty table as a fresh deployment has it
 * and on `size` jobs (setup: one INSERT … generate_series, then ANALYZE: 80 % completed, 15 %
 * ready, 4 % scheduled a month ahead, 1 % active with leases a minute ahead). Each statement runs
 * CALLS_BEFORE times on a new connection before the call whose plans are printed, so they are the
 * plans a busy worker's connection keeps. The plans go to stderr with a summary of what each
 * statement reads the jobs table with; the figures are the calls' durations and the count of
 * sequential scans of jobs among every plan (0: every hot statement reaches it by index,
 * src/store/postgres/functions/README.md).
 */
export async function postgresPlans(size: number): Promise<Figure[]> {
  const figures: Figure[] = []
  const summary: string[] = []
  for (const [tag, jobs] of [
    ['empty', 0],
    ['big', size],
  ] as const) {
    await withBenchSchema(async (bench) => {
      await bench.open() // migrates the schema
      if (jobs > 0) await fill(bench, jobs)
      const where = jobs === 0 ? 'an empty table' : `${fmt(jobs)} jobs`
      let seqScans = 0
      for (const statement of STATEMENTS) {
        const plans = await plansOf(bench, statement)
        process.stderr.write(`\n-- ${statement.text}, on ${where}:\n${plans.text}\n`)
        summary.push(`  ${where.padEnd(16)} ${statement.tag.padEnd(17)} ${plans.access.join(', ')}`)
        seqScans += plans.access.filter((access) => access === 'Seq Scan on jobs').length
        figures.push({
          key: `${tag}.${statement.tag}.ms`,
          label: `${statement.text}, on ${jobs === 0 ? 'an empty table' : `${fmt(jobs)} jobs`}: the call (auto_explain, analyzed)`,
          value: plans.durationMs,
          unit: 'ms',
        })
      }
      figures.push({
        key: `${tag}.seq_scans`,
        label: `sequential scans of jobs in the plans of every hot statement, on ${where}`,
        value: seqScans,
        unit: '×',
        mayBeZero: true,
      })
    })
  }
  process.stderr.write(
    `\n-- what each hot statement reads its tables with (index names; "(whole)": no Index Cond, every entry read):\n` +
      `${summary.join('\n')}\n\n`,
  )
  return figures
}

/** The plans of `statement`'s call after CALLS_BEFORE others, on a connection of its own. */
async function plansOf(bench: BenchSchema, statement: HotStatement): Promise<Plans> {
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL })
  const lockHolder = new pg.Client({ connectionString: BENCH_POSTGRES_URL })
  await Promise.all([client.connect(), lockHolder.connect()])
  const notices: string[] = []
  client.on('notice', (notice) => notices.push(notice.message ?? ''))
  try {
    const [{ key }] = (
      await lockHolder.query<{ key: string }>(
        `SELECT k::text AS key, pg_advisory_lock(k) FROM (SELECT (random() * 9e18)::bigint AS k) AS r`,
      )
    ).rows as [{ key: string }]
    await client.query(`LOAD 'auto_explain'`)
    for (const setting of [
      'auto_explain.log_min_duration = 0',
      'auto_explain.log_analyze = on',
      'auto_explain.log_buffers = on',
      'auto_explain.log_timing = on',
      'auto_explain.log_nested_statements = on',
      'auto_explain.log_level = notice',
    ])
      await client.query(`SET ${setting}`)
    const session = (seq: number): Session => ({ client, s: `"${bench.schema}"`, seq, waiterLockKey: key })
    for (let i = 0; i < CALLS_BEFORE; i++) await statement.call(session(i))
    notices.length = 0
    await statement.call(session(CALLS_BEFORE))
    // Plans logged before the marker belong to the call's setup (the claims that lease its jobs).
    const marker = notices.findIndex((notice) => notice.includes('plans_of_the_setup_end_here'))
    const own = notices.slice(marker + 1)
    const access = [...new Set(own.flatMap(accessPaths))]
    const durations = own.map((plan) => Number(/duration: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN))
    return { text: own.join('\n\n'), access, durationMs: durations[durations.length - 1] ?? NaN }
  } finally {
    await Promise.all([client.end(), lockHolder.end()])
  }
}

/**
 * How a plan reads its tables, node by node: `Seq Scan on <table>`, or the index's name, with
 * " (whole)" when the node has no Index Cond (it reads every entry of the index and filters them).
 */
function accessPaths(plan: string): string[] {
  const lines = plan.split('\n')
  const paths: string[] = []
  lines.forEach((line, at) => {
    const seq = /Seq Scan on (\w+)/.exec(line)
    if (seq !== null) return void paths.push(`Seq Scan on ${seq[1]}`)
    const index = /(?:Index (?:Only )?Scan(?: Backward)? using (\w+)|Bitmap Index Scan on (\w+))/.exec(line)
    if (index === null) return
    // The node's own detail lines are the deeper-indented ones up to its first child ("->").
    const indent = line.search(/\S/)
    let bounded = false
    for (const next of lines.slice(at + 1)) {
      if (next.trim() === '' || next.search(/\S/) <= indent || next.trim().startsWith('->')) break
      if (next.includes('Index Cond:')) bounded = true
    }
    paths.push(`${index[1] ?? index[2]}${bounded ? '' : ' (whole)'}`)
  })
  return paths
}

/** `jobs` rows in one statement, then ANALYZE: 80 % completed, 15 % ready, 4 % scheduled, 1 % active. */
async function fill(bench: BenchSchema, jobs: number): Promise<void> {
  const s = `"${bench.schema}"`
  await bench.admin(
    `INSERT INTO ${s}.jobs (queue, name, payload, state, priority, run_at, attempts, max_attempts, lease_token,
                            lease_expires_at, worker_id, created_at, updated_at, finished_at)
     SELECT 'default', 'bench.plans', '{"seq":' || g || ',"pad":"' || repeat('x', 80) || '"}', k.state, 0,
            CASE WHEN k.state = 'scheduled' THEN t.now + 2592000000::bigint ELSE t.now - $1::bigint + g END,
            CASE WHEN k.state IN ('completed', 'active') THEN 1 ELSE 0 END, 25,
            CASE WHEN k.state = 'active' THEN md5(g::text) END,
            CASE WHEN k.state = 'active' THEN t.now + 60000 END,
            CASE WHEN k.state = 'active' THEN 'bench' END,
            t.now - $1::bigint + g, t.now, CASE WHEN k.state = 'completed' THEN t.now - $1::bigint + g END
     FROM generate_series(1, $1::integer) AS g, (SELECT ${s}.now_ms() AS now) AS t,
          LATERAL (SELECT CASE WHEN g % 100 < 80 THEN 'completed' WHEN g % 100 < 95 THEN 'ready'
                               WHEN g % 100 < 99 THEN 'scheduled' ELSE 'active' END AS state) AS k`,
    [jobs],
  )
  await bench.admin(`ANALYZE ${s}.jobs`)
}

export const postgresPlansScenario: ScenarioDef = {
  name: 'postgres-plans',
  store: 'postgres',
  summary:
    'PostgreSQL: the plan of every hot statement (auto_explain) on an empty table and on 1,000,000 jobs',
  fullSize: 1_000_000,
  quickSize: 2_000,
  run: postgresPlans,
  targets: { 'empty.seq_scans': { op: '<=', value: 0 }, 'big.seq_scans': { op: '<=', value: 0 } },
}
