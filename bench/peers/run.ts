/**
 * `npm run bench:peers`: Ferry beside BullMQ, graphile-worker, pg-boss and plainjob, and beside the
 * floor (the drivers alone), on the same scenarios with durable settings, in one invocation.
 * Round robin: in each run, every scenario and store takes each product in turn, the first one
 * rotating from run to run, each measurement in a fresh child process (child.ts) on a fresh
 * database. Prints a table per scenario, figure and store (median of the runs, min – max, ratio
 * to the floor and to the best peer) and appends them to bench/RESULTS.md.
 *
 *   npm run bench:peers                                   everything, 3 runs, recorded
 *   npm run bench:peers -- --quick --no-record            tiny sizes, to check it all runs
 *   npm run bench:peers -- --products ferry,floor --stores sqlite --scenarios serial-enqueue --no-record
 */
import { spawn } from 'node:child_process'
import { appendFileSync, existsSync, readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { REPO_ROOT } from '../../tests/support/processes.js'
import { ensureBuilt } from '../lib/dist.js'
import { machineFacts } from '../lib/machine.js'
import { formatNumber } from '../lib/report.js'
import { secondsSince } from '../lib/stats.js'
import { renderFigureTable, type RowData } from './lib/report.js'
import { SCENARIOS, type ScenarioDef } from './lib/scenarios.js'
import { describeStore, dropLeftovers, unavailable, withTarget } from './lib/targets.js'
import {
  isPeer,
  PRODUCT_STORES,
  PRODUCTS,
  RESULT_PREFIX,
  SCENARIO_NAMES,
  STORES,
  variantsOf,
  type MeasureRequest,
  type MeasureResult,
  type ProductName,
  type ScenarioName,
  type StoreKind,
  type Target,
  type Variant,
  type Windowed,
} from './lib/types.js'

const PEERS_DIR = fileURLToPath(new URL('.', import.meta.url))
const CHILD = join(PEERS_DIR, 'child.ts')
const RESULTS_PATH = new URL('../RESULTS.md', import.meta.url)
/** A measurement still running after this long is killed and counted as failed. */
const CHILD_TIMEOUT_MS = 10 * 60_000

const USAGE = `Usage: npm run bench:peers -- [options]

Options:
  --runs N            runs of every measurement; the median is reported (default 3)
  --products LIST     ${PRODUCTS.join(',')} (default: all)
  --stores LIST       ${STORES.join(',')} (default: all)
  --scenarios LIST    ${SCENARIO_NAMES.join(',')} (default: all)
  --quick             tiny sizes, to check that everything runs (never recorded)
  --no-record         print only: do not append to bench/RESULTS.md
  --help              this text

Scenarios:
${SCENARIOS.map((s) => `  ${s.name.padEnd(20)}${s.summary}`).join('\n')}`

interface Options {
  runs: number
  products: ProductName[]
  stores: StoreKind[]
  scenarios: ScenarioDef[]
  quick: boolean
  record: boolean
}

function listOption<T extends string>(values: string[] | undefined, known: readonly T[], what: string): T[] {
  if (values === undefined) return [...known]
  const names = values.flatMap((value) => value.split(',')).map((name) => name.trim())
  const unknown = names.filter((name) => !(known as readonly string[]).includes(name))
  if (unknown.length > 0)
    throw new Error(`unknown ${what} ${unknown.join(', ')} (known: ${known.join(', ')})`)
  return known.filter((name) => names.includes(name))
}

const OPTIONS = {
  products: { type: 'string', multiple: true },
  stores: { type: 'string', multiple: true },
  scenarios: { type: 'string', multiple: true },
  runs: { type: 'string', default: '3' },
  quick: { type: 'boolean', default: false },
  'no-record': { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
} as const

/** The options, or null for --help; throws on a wrong one. */
function parseOptions(argv: string[]): Options | null {
  const { values } = parseArgs({ args: argv, options: OPTIONS })
  if (values.help) return null
  const runs = Number(values.runs)
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`--runs must be a positive integer (got ${values.runs})`)
  const names = listOption(values.scenarios, SCENARIO_NAMES, 'scenario')
  return {
    runs,
    products: listOption(values.products, PRODUCTS, 'product'),
    stores: listOption(values.stores, STORES, 'store'),
    scenarios: SCENARIOS.filter((s) => names.includes(s.name)),
    quick: values.quick,
    record: !values.quick && !values['no-record'],
  }
}

/** One row of the tables: a product (with a variant) in a scenario, on a store or, for the idle floor, on none. */
interface Entry {
  scenario: ScenarioDef
  store: StoreKind | null
  product: ProductName
  variant: Variant | null
}

const keyOf = (entry: Entry): string =>
  [entry.scenario.name, entry.store ?? 'none', entry.product, entry.variant?.id ?? ''].join('|')

/**
 * The entries of one scenario on one store, in table order. The idle floor, a bare Node process,
 * needs no store: its entry (store null) is the same in every store's table.
 */
function entriesOf(scenario: ScenarioDef, store: StoreKind, products: readonly ProductName[]): Entry[] {
  return products
    .filter((product) => PRODUCT_STORES[product].includes(store))
    .flatMap((product) => {
      const where = product === 'floor' && scenario.name === 'idle' ? null : store
      return [
        { scenario, store: where, product, variant: null },
        ...variantsOf(product, scenario.name).map((variant) => ({
          scenario,
          store: where,
          product,
          variant,
        })),
      ]
    })
}

let currentChild: ReturnType<typeof spawn> | null = null

/** Runs child.ts on one request and returns what it printed as its result. */
function runChild(request: MeasureRequest): Promise<MeasureResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(request)], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    currentChild = child
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      currentChild = null
      const line = stdout
        .split('\n')
        .reverse()
        .find((l) => l.startsWith(RESULT_PREFIX))
      if (code === 0 && line !== undefined) {
        resolve(JSON.parse(line.slice(RESULT_PREFIX.length)) as MeasureResult)
        return
      }
      const tail = stderr.trim().split('\n').slice(-12).join('\n')
      reject(new Error(`${request.phase} exited with ${signal ?? code}${tail === '' ? '' : `:\n${tail}`}`))
    })
  })
}

async function measure(entry: Entry, quick: boolean): Promise<MeasureResult> {
  const request = (phase: MeasureRequest['phase'], target: Target | null): MeasureRequest => ({
    phase,
    product: entry.product,
    variant: entry.variant?.id ?? '',
    scenario: entry.scenario.name,
    target,
    quick,
  })
  if (entry.store === null) return runChild(request('measure', null))
  return withTarget(entry.store, async (target) => {
    if (entry.scenario.prepareApart) await runChild(request('prepare', target))
    return runChild(request('measure', target))
  })
}

function describeEntry(entry: Entry): string {
  const variant = entry.variant === null ? '' : ` (${entry.variant.label})`
  return `${entry.scenario.name} ${entry.store ?? '(no store)'} ${entry.product}${variant}`
}

function shortResult(entry: Entry, result: MeasureResult): string {
  return entry.scenario.figures
    .map((figure) => `${formatNumber(result.figures[figure.key] ?? NaN)} ${figure.unit}`)
    .join(', ')
}

function packageVersion(dir: string, name: string): string {
  try {
    const path = join(dir, 'node_modules', name, 'package.json')
    return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version
  } catch {
    return 'not installed'
  }
}

function productsLine(products: readonly ProductName[]): string {
  const peer = (name: string): string => `${name} ${packageVersion(PEERS_DIR, name)}`
  const parts: string[] = []
  for (const product of products) {
    if (product === 'ferry') parts.push("Ferry (this repository's build, dist/)")
    else if (product === 'floor')
      parts.push(
        `the floor (the drivers alone: better-sqlite3 ${packageVersion(REPO_ROOT, 'better-sqlite3')}, pg ${packageVersion(PEERS_DIR, 'pg')}, ioredis ${packageVersion(PEERS_DIR, 'ioredis')})`,
      )
    else if (product === 'bullmq')
      parts.push(`${peer('bullmq')} (ioredis ${packageVersion(PEERS_DIR, 'ioredis')})`)
    else if (product === 'plainjob')
      parts.push(`${peer('plainjob')} (better-sqlite3 ${packageVersion(REPO_ROOT, 'better-sqlite3')})`)
    else parts.push(`${peer(product)} (pg ${packageVersion(PEERS_DIR, 'pg')})`)
  }
  return parts.join(', ')
}

/** What a reader must know to read the figures, for the products and scenarios it concerns. */
interface Caveat {
  text: string
  products?: readonly ProductName[]
  scenarios?: readonly ScenarioName[]
}

const CAVEATS: readonly Caveat[] = [
  {
    text: "Every measurement is a fresh `node --import tsx` child process: Ferry runs from its compiled build (dist/, made by npm run build when older than src/), as its users run it, and like the peers' JavaScript is loaded untransformed (tsx rewrites only TypeScript files, and there wraps every closure to keep its name, a cost no user's build pays). Start-up is timed after the modules are loaded.",
  },
  {
    text: 'pg-boss 10 polls: a work() call fetches batchSize (default 1) jobs, runs them, then waits out its polling interval (default 2 s, at least 0.5 s) before it fetches again, whether or not it found jobs; concurrency N is N work() calls. At one job per worker per interval its process rows are what it completed within a 10 s window (the note says how many jobs that was), not the whole backlog, which would take over half an hour at its defaults. Its own answer to throughput is a larger batchSize, a handler that takes an array of jobs, which these scenarios do not measure.',
    products: ['pg-boss'],
    scenarios: ['process-c1', 'process-c10', 'idle'],
  },
  {
    text: "graphile-worker and pg-boss settle jobs in the background: graphile-worker's 'job:complete' event comes before the DELETE of the job has committed, pg-boss emits nothing per job. Their clock stops when a connection of the benchmark's own (opened before the clock starts) sees every job completed, polled every 5 ms. Ferry's, BullMQ's, plainjob's and the floor's completion events come after the commit.",
    products: ['graphile-worker', 'pg-boss'],
    scenarios: ['process-c1', 'process-c10'],
  },
  {
    text: "plainjob's defineQueue sets synchronous=NORMAL; the benchmark sets FULL right after it (the durable setting). A plainjob worker runs one job at a time and polls every 1 s when it finds none: concurrency 10 is 10 defineWorker loops in one process, whose synchronous SQLite calls take turns on the event loop.",
    products: ['plainjob'],
  },
  {
    text: "Concurrency 10, the rest at each product's defaults: Ferry concurrency 10 (its default, with prefetch at its default, auto since d35fc1f and 0 before; a second row with prefetch 10), BullMQ Worker concurrency 10, graphile-worker run() concurrency 10, pg-boss 10 work() calls, plainjob 10 workers; the floor claims up to 10 jobs in one commit, runs them, and marks them done in one commit.",
    scenarios: ['process-c10'],
  },
  {
    text: 'Bulk paths: Ferry client.enqueueMany; BullMQ Queue.addBulk; graphile-worker WorkerUtils.addJobs (one statement); pg-boss boss.insert (one statement); plainjob queue.addMany (one transaction); the floor one transaction of INSERTs (SQLite), one INSERT … SELECT FROM unnest (PostgreSQL), one MULTI of LPUSHes (Redis). Single enqueues: Ferry client.enqueue, BullMQ Queue.add, graphile-worker WorkerUtils.addJob, pg-boss boss.send, plainjob queue.add. Every enqueue scenario starts its clock after 10 untimed warm-up calls of the path it measures: single enqueues, and for bulk-enqueue bulk calls of 100 jobs.',
    scenarios: ['serial-enqueue', 'bulk-enqueue', 'concurrent-enqueue'],
  },
  {
    text: "Concurrent enqueues are Promise.all of single enqueues. Ferry's group commit joins those issued in one tick into shared commits; the floor does no batching (SQLite: one commit each, in turn; PostgreSQL: single INSERTs over a pool of 10; Redis: LPUSHes in flight on one connection, which Redis fsyncs once per turn of its event loop), so a ratio above 1× to the floor there is batching at work.",
    scenarios: ['concurrent-enqueue'],
  },
  {
    text: "Startup: from the start of creating the worker, connections and store opening included (with each product's check of its schema: pg-boss start(), graphile-worker run(), Ferry's store open), to the first handler starting, in a fresh process whose modules are already loaded; one job waits in a store migrated by another process.",
    scenarios: ['startup'],
  },
  {
    text: "Idle: the worker's own process only (utime + stime from /proc, 10 ms ticks: one tick in 20 s is 0.05 %), over 20 s from 20 s after its start, past start-up's late garbage collections; the database servers' CPU is not counted (polling costs the server too). RSS at the end of the window. The floor is a bare Node process under the same runner, loading nothing else.",
    scenarios: ['idle'],
  },
  {
    text: "BullMQ uses ioredis 5 (installed under bench/peers/), Ferry ioredis 6 (the repository's dev dependency); graphile-worker, pg-boss and the PostgreSQL floor use the pg under bench/peers/, Ferry the repository's.",
    products: ['bullmq', 'graphile-worker', 'pg-boss'],
  },
  {
    text: 'The machine has 2 cores, shared by the benchmark, the database servers and other sessions: figures move between runs (min – max), and the load average is given above.',
  },
]

/** The caveats that concern what this run measured. */
function caveatsFor(options: Options): string[] {
  return CAVEATS.filter(
    (caveat) =>
      (caveat.products === undefined || caveat.products.some((p) => options.products.includes(p))) &&
      (caveat.scenarios === undefined ||
        caveat.scenarios.some((n) => options.scenarios.some((s) => s.name === n))),
  ).map((caveat) => caveat.text)
}

function commandLine(argv: readonly string[]): string {
  const args = argv.join(' ')
  if (process.env.npm_lifecycle_event === 'bench:peers')
    return args === '' ? 'npm run bench:peers' : `npm run bench:peers -- ${args}`
  return `npx tsx bench/peers/run.ts${args === '' ? '' : ` ${args}`}`
}

const load = (): string =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(', ')

/** The options, or the exit code when there is nothing to run (help, a wrong option, peers missing). */
function readOptions(argv: string[]): Options | number {
  let options: Options | null
  try {
    options = parseOptions(argv)
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`)
    return 2
  }
  if (options === null) process.stdout.write(`${USAGE}\n`)
  else if (options.products.some(isPeer) && !existsSync(join(PEERS_DIR, 'node_modules')))
    process.stderr.write(
      'The peers are not installed: run `npm ci --prefix bench/peers` (npm run bench:peers does).\n',
    )
  else return options
  return options === null ? 0 : 1
}

/** What the runs gathered for one entry. */
interface Gathered {
  values: Record<string, number>[]
  windowed: Windowed[]
  errors: string[]
}

/** Every run, round robin: in each scenario and store the entries take turns, the first one rotating. */
async function runAll(options: Options, stores: readonly StoreKind[]): Promise<Map<string, Gathered>> {
  const results = new Map<string, Gathered>()
  const gathered = (entry: Entry): Gathered => {
    const key = keyOf(entry)
    if (!results.has(key)) results.set(key, { values: [], windowed: [], errors: [] })
    return results.get(key)!
  }
  for (let run = 0; run < options.runs; run++) {
    for (const scenario of options.scenarios) {
      for (const [index, store] of stores.entries()) {
        // The store-less idle floor is measured once per run, among the first store's entries.
        const entries = entriesOf(scenario, store, options.products).filter(
          (e) => e.store !== null || index === 0,
        )
        const first = entries.length === 0 ? 0 : run % entries.length
        for (const entry of [...entries.slice(first), ...entries.slice(0, first)]) {
          process.stderr.write(`▸ run ${run + 1}/${options.runs} ${describeEntry(entry)} … `)
          const began = process.hrtime.bigint()
          try {
            const result = await measure(entry, options.quick)
            gathered(entry).values.push(result.figures)
            if (result.windowed !== undefined) gathered(entry).windowed.push(result.windowed)
            process.stderr.write(`${shortResult(entry, result)} (${secondsSince(began).toFixed(1)} s)\n`)
          } catch (error) {
            const message = (error as Error).message
            gathered(entry).errors.push(message.split('\n')[0]!)
            process.stderr.write(`failed\n${message}\n`)
          }
        }
      }
    }
  }
  return results
}

/** A table per scenario, figure and store. */
function renderTables(
  options: Options,
  stores: readonly StoreKind[],
  results: Map<string, Gathered>,
): string {
  const tables: string[] = []
  for (const scenario of options.scenarios) {
    for (const figure of scenario.figures) {
      for (const store of stores) {
        const entries = entriesOf(scenario, store, options.products)
        if (entries.length === 0) continue
        const rows: RowData[] = entries.map((entry) => {
          const data = results.get(keyOf(entry)) ?? { values: [], windowed: [], errors: [] }
          return {
            product: entry.product,
            variantLabel: entry.store === null ? 'a bare Node process' : (entry.variant?.label ?? ''),
            values: data.values.flatMap((figures) => (figure.key in figures ? [figures[figure.key]!] : [])),
            windowed: data.windowed,
            errors: data.errors,
          }
        })
        tables.push(renderFigureTable(scenario, figure, store, rows))
      }
    }
  }
  return tables.join('\n\n')
}

interface Run {
  argv: readonly string[]
  options: Options
  date: Date
  loadAtStart: string
  machine: ReturnType<typeof machineFacts>
  stores: readonly StoreKind[]
  skipped: readonly string[]
  failures: number
  elapsedSeconds: number
}

/** The section appended to bench/RESULTS.md: when, what, where, then the tables and caveats. */
async function renderSection(run: Run, body: string, caveats: string): Promise<string> {
  const { options, machine: m } = run
  const runs = `${options.runs} run${options.runs === 1 ? '' : 's'}`
  const failed =
    run.failures === 0
      ? ''
      : `; ${run.failures} measurement${run.failures === 1 ? '' : 's'} failed (in the tables)`
  const storeLines = await Promise.all(run.stores.map(describeStore))
  return [
    `## ${run.date.toISOString()}: Ferry beside its peers`,
    '',
    `- Command: \`${commandLine(run.argv)}\` (${options.scenarios.map((s) => s.name).join(', ')}; ${runs} of each measurement, round robin; ${formatNumber(run.elapsedSeconds)} s in all)`,
    `- Products: ${productsLine(options.products)}`,
    ...storeLines.map((line) => `- Store: ${line}`),
    ...run.skipped.map((line) => `- Skipped: ${line}`),
    `- Machine: Node ${m.node}, ${m.cpuCount} CPUs (${m.cpuModel}) shared with other sessions, ${m.memoryGiB} GiB RAM; load average (1, 5, 15 min) ${run.loadAtStart} at start, ${load()} at end`,
    `- Filesystem of .bench-tmp/: ${m.filesystem}`,
    `- Code: ${m.revision}`,
    `- Each figure: median of ${runs} (min – max), each measurement a fresh child process on a fresh database; within a scenario and store the products take turns, the first one rotating each run${failed}`,
    '',
    body,
    '',
    'Caveats:',
    '',
    caveats,
    '',
  ].join('\n')
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2)
  const options = readOptions(argv)
  if (typeof options === 'number') return options
  const start = process.hrtime.bigint()
  const date = new Date()
  const loadAtStart = load()
  const machine = machineFacts()
  const stores: StoreKind[] = []
  const skipped: string[] = []
  for (const store of options.stores) {
    const reason = await unavailable(store)
    if (reason === null) stores.push(store)
    else skipped.push(`${store}: ${reason}`)
  }
  for (const line of skipped) process.stderr.write(`Skipped ${line}\n`)

  if (options.products.includes('ferry')) ensureBuilt()
  const results = await runAll(options, stores)
  const body = renderTables(options, stores, results)
  const caveats = caveatsFor(options)
    .map((caveat) => `- ${caveat}`)
    .join('\n')
  process.stdout.write(`\n${body}\n\nCaveats:\n${caveats}\n`)
  const failures = [...results.values()].reduce((sum, data) => sum + data.errors.length, 0)
  const elapsedSeconds = secondsSince(start)
  if (options.record) {
    const run: Run = { argv, options, date, loadAtStart, machine, stores, skipped, failures, elapsedSeconds }
    appendFileSync(RESULTS_PATH, `\n${await renderSection(run, body, caveats)}`)
    process.stderr.write('Appended to bench/RESULTS.md\n')
  } else {
    process.stderr.write(`Not recorded (${options.quick ? '--quick' : '--no-record'})\n`)
  }
  process.stderr.write(
    `${formatNumber(elapsedSeconds)} s; load average ${loadAtStart} at start, ${load()} at end\n`,
  )
  return failures > 0 ? 1 : 0
}

process.once('SIGINT', () => {
  currentChild?.kill('SIGKILL')
  void dropLeftovers().finally(() => process.exit(130))
})

process.exitCode = await main()
