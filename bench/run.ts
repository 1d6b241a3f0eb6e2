/**
 * `npm run bench`: runs the benchmark scenarios, prints a table of medians against Ferry's design
 * targets, and appends it to bench/RESULTS.md with the date, machine, store and command.
 *
 *   npm run bench                                  every scenario at full size, 3 runs, recorded
 *   npm run bench -- --scenario enqueue-1k,fsync-rate --runs 5
 *   npm run bench -- --quick --runs 1              tiny sizes (as CI runs them): never recorded
 *   npm run bench -- --no-record                   full size, print only
 */
import { appendFileSync, existsSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { machineFacts, type MachineFacts } from './lib/machine.js'
import { describePostgres } from './lib/postgres.js'
import { describeRedis } from './lib/redis.js'
import { SCENARIOS } from './lib/registry.js'
import {
  describeSqlite,
  judge,
  renderSection,
  renderTable,
  type Row,
  type ScenarioError,
} from './lib/report.js'
import { secondsSince, summarize } from './lib/stats.js'
import { storeOf, type BenchStoreKind, type Figure, type ScenarioDef } from './lib/types.js'

const RESULTS_PATH = new URL('./RESULTS.md', import.meta.url)

const USAGE = `Usage: npm run bench -- [options]

Options:
  --scenario NAME   run only this scenario (repeatable, or a comma-separated list)
  --runs N          runs per scenario, each on a fresh database; the median is reported (default 3)
  --quick           tiny sizes, to check the scenarios work; the table is not recorded
  --size N          run every scenario chosen at size N instead of its full size (the command,
                    recorded with the results, says so)
  --no-record       do not append the results to bench/RESULTS.md
  --help            this text

Scenarios:
${SCENARIOS.map((s) => `  ${s.name.padEnd(20)}${s.summary}`).join('\n')}`

interface Options {
  scenarios: ScenarioDef[]
  runs: number
  quick: boolean
  /** Overrides each scenario's full size (--size). */
  size: number | null
  record: boolean
}

function parseOptions(argv: string[]): Options | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      scenario: { type: 'string', multiple: true },
      runs: { type: 'string' },
      quick: { type: 'boolean', default: false },
      size: { type: 'string' },
      'no-record': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  })
  if (values.help) return null
  const names = (values.scenario ?? []).flatMap((list) => list.split(',')).map((name) => name.trim())
  const unknown = names.filter((name) => !SCENARIOS.some((s) => s.name === name))
  if (unknown.length > 0) {
    throw new Error(
      `unknown scenario ${unknown.join(', ')} (known: ${SCENARIOS.map((s) => s.name).join(', ')})`,
    )
  }
  const runs = values.runs === undefined ? 3 : Number(values.runs)
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`--runs must be a positive integer (got ${values.runs})`)
  const size = values.size === undefined ? null : Number(values.size)
  if (size !== null && (!Number.isInteger(size) || size < 1 || values.quick))
    throw new Error(`--size must be a positive integer, without --quick (got ${values.size})`)
  return {
    scenarios: names.length === 0 ? [...SCENARIOS] : SCENARIOS.filter((s) => names.includes(s.name)),
    runs,
    quick: values.quick,
    size,
    record: !values.quick && !values['no-record'],
  }
}

/** Runs one scenario `runs` times and folds the figures into one row per figure. */
async function runScenario(def: ScenarioDef, options: Options): Promise<Row[]> {
  const size = options.quick ? def.quickSize : (options.size ?? def.fullSize)
  const perRun: Figure[][] = []
  for (let run = 1; run <= options.runs; run++) {
    process.stderr.write(`▸ ${def.name} (size ${size.toLocaleString('en-US')}) run ${run}/${options.runs} … `)
    const start = process.hrtime.bigint()
    const figures = await def.run(size)
    process.stderr.write(`${secondsSince(start).toFixed(1)} s\n`)
    perRun.push(figures)
  }
  const first = perRun[0]!
  return first.map((figure) => {
    const values = perRun.map((figures) => {
      const match = figures.find((f) => f.key === figure.key)
      if (match === undefined) throw new Error(`${def.name}: figure ${figure.key} missing from a run`)
      return match.value
    })
    const summary = summarize(values)
    const target = def.targets[figure.key]
    const verdict =
      target === undefined
        ? ''
        : options.quick
          ? 'not judged (quick)'
          : judge(summary.median, target)
            ? 'pass'
            : 'FAIL'
    return {
      scenario: def.name,
      label: figure.label,
      unit: figure.unit,
      summary,
      target,
      verdict,
    } satisfies Row
  })
}

function commandLine(argv: readonly string[]): string {
  const args = argv.join(' ')
  if (process.env.npm_lifecycle_event === 'bench')
    return args === '' ? 'npm run bench' : `npm run bench -- ${args}`
  return `npx tsx bench/run.ts${args === '' ? '' : ` ${args}`}`
}

/** The Store line of each store: what it is, its version and its durability setting. */
const STORE_DESCRIPTIONS: Record<BenchStoreKind, (machine: MachineFacts) => Promise<string>> = {
  sqlite: async (machine) => describeSqlite(machine),
  postgres: describePostgres,
  redis: describeRedis,
}

/** The descriptions of the stores these scenarios use, in the order they first appear. */
async function describeStores(scenarios: readonly ScenarioDef[], machine: MachineFacts): Promise<string[]> {
  const kinds = [...new Set(scenarios.map(storeOf))]
  return Promise.all(
    kinds.map((kind) =>
      STORE_DESCRIPTIONS[kind](machine).catch((error: unknown) => `${kind} (${(error as Error).message})`),
    ),
  )
}

const RESULTS_HEADER = `# Benchmark results

Appended by \`npm run bench\` (see bench/run.ts); the newest section is last. Each section says when,
on what machine and filesystem, with which store, durability setting and command its figures were
taken. Targets are Ferry's design goals; a quick run (\`--quick\`) is never recorded.

`

async function main(): Promise<number> {
  const argv = process.argv.slice(2)
  let parsed: Options | null
  try {
    parsed = parseOptions(argv)
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`)
    return 2
  }
  if (parsed === null) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  const options = parsed
  const date = new Date()
  const machine = machineFacts()
  const stores = await describeStores(options.scenarios, machine)
  process.stderr.write(
    `Ferry bench: ${options.runs} run(s) per scenario${options.quick ? ', quick sizes' : ''}\n` +
      stores.map((store) => `Store: ${store}\n`).join('') +
      `Node ${machine.node}, ${machine.cpuCount} CPUs, load ${machine.loadAverage}, .bench-tmp on ${machine.filesystem}\n`,
  )
  const start = process.hrtime.bigint()
  const rows: Row[] = []
  const errors: ScenarioError[] = []
  for (const def of options.scenarios) {
    try {
      rows.push(...(await runScenario(def, options)))
    } catch (error) {
      process.stderr.write(`failed\n${(error as Error).stack ?? String(error)}\n`)
      errors.push({ scenario: def.name, message: (error as Error).message ?? String(error) })
    }
  }
  const elapsedSeconds = secondsSince(start)
  const table = renderTable(rows, errors)
  process.stdout.write(`\n${table}\n\n`)

  if (options.record) {
    const section = renderSection({
      date,
      command: commandLine(argv),
      runs: options.runs,
      machine,
      scenarios: options.scenarios.map((s) => s.name),
      stores,
      table,
      elapsedSeconds,
    })
    if (!existsSync(RESULTS_PATH)) writeFileSync(RESULTS_PATH, RESULTS_HEADER)
    appendFileSync(RESULTS_PATH, `\n${section}`)
    process.stderr.write('Appended to bench/RESULTS.md\n')
  } else {
    process.stderr.write(`Not recorded (${options.quick ? '--quick' : '--no-record'})\n`)
  }
  return errors.length > 0 ? 1 : 0
}

process.exitCode = await main()
