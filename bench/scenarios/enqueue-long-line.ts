import { spawn } from 'node:child_process'
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { SqliteStore } from '../../src/sqlite.js'
import { DIST_CLI, ensureBuilt } from '../lib/dist.js'
import { secondsSince } from '../lib/stats.js'
import { REPO_ROOT } from '../../tests/support/processes.js'
import { withTempDir } from '../lib/temp.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

const MIB = 1024 * 1024
/** The long lines of a full-size run, as fractions of `size`: 16, 32, 64 and 100 MiB at 100. */
const FRACTIONS = [0.16, 0.32, 0.64, 1] as const
/** Good lines before and after the long one. */
const GOOD_LINES_EACH_SIDE = 3
/** How often the child's peak RSS (VmHWM, a high-water mark, so no peak between reads is lost) is read. */
const RSS_POLL_MS = 5
const RUN_TIMEOUT_MS = 600_000

interface Measured {
  seconds: number
  peakRssBytes: number
}

/**
 * `ferry enqueue --stdin` (node dist/cli/main.js: compiled, no TypeScript loader) reading a file
 * of 3 good lines, one long line `{"name":"huge","payload":"xxx…"}` of N MiB, and 3 good lines,
 * into a fresh SQLite database (durability full). N is 16, 32, 64 and 100 at full size
 * (`size` = 100), and a run without the long line gives the baseline. Each run is checked: the
 * six good lines stored, the long line reported as bad (exit 1). Figures: wall time from spawn to
 * exit, start-up included, and the peak RSS of the ferry process (VmHWM in /proc/<pid>/status,
 * read every 5 ms), in MiB.
 * Before the fix, joining every chunk to the pending text made this quadratic: 16 / 32 / 64 /
 * 100 MB lines took 2.7 / 12.4 / 64.8 / 150.6 s and up to 1.08 GB RSS.
 */
export async function enqueueLongLine(size: number): Promise<Figure[]> {
  ensureBuilt()
  const figures: Figure[] = []
  const lineSizes = [0, ...FRACTIONS.map((fraction) => Math.round(fraction * size * MIB))]
  for (const lineBytes of lineSizes) {
    const m = await measure(lineBytes)
    const key = lineBytes === 0 ? 'baseline' : `line_${formatMib(lineBytes)}mib`
    const what =
      lineBytes === 0 ? `${2 * GOOD_LINES_EACH_SIDE} good lines only` : `a ${formatMib(lineBytes)} MiB line`
    figures.push(
      { key: `${key}.total_s`, label: `${what}: wall time, start-up included`, value: m.seconds, unit: 's' },
      {
        key: `${key}.peak_rss_mib`,
        label: `${what}: peak RSS of the ferry process`,
        value: m.peakRssBytes / MIB,
        unit: 'MiB',
      },
    )
  }
  return figures
}

function formatMib(bytes: number): string {
  return String(Math.round((bytes / MIB) * 100) / 100)
}

async function measure(lineBytes: number): Promise<Measured> {
  return withTempDir('enqueue-long-line', async (dir) => {
    const dbPath = join(dir, 'bench.db')
    // Migrated before the clock starts, as a deployed store would be.
    await (await SqliteStore.open({ path: dbPath, durability: 'full' })).close()
    const inputPath = join(dir, 'input.jsonl')
    writeInput(inputPath, lineBytes)

    const input = openSync(inputPath, 'r')
    const start = process.hrtime.bigint()
    const child = spawn(process.execPath, [DIST_CLI, '--store', `sqlite://${dbPath}`, 'enqueue', '--stdin'], {
      cwd: REPO_ROOT,
      stdio: [input, 'pipe', 'pipe'],
    })
    closeSync(input)
    let stdout = ''
    let stderr = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    let peakRssBytes = 0
    const poll = setInterval(() => {
      peakRssBytes = Math.max(peakRssBytes, readPeakRss(child.pid!))
    }, RSS_POLL_MS)
    const killer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS)
    // 'exit' is the end of the process (the clock stops there); 'close' comes once its output is read.
    const exited = new Promise<number | null>((resolve, reject) => {
      child.once('error', reject)
      child.once('exit', (exitCode) => resolve(exitCode))
    })
    const closed = new Promise((resolve) => child.once('close', resolve))
    const code = await exited.finally(() => {
      clearInterval(poll)
      clearTimeout(killer)
    })
    const seconds = secondsSince(start)
    await closed

    const ids = stdout.trim() === '' ? [] : stdout.trim().split('\n')
    const expectedCode = lineBytes === 0 ? 0 : 1
    if (code !== expectedCode || ids.length !== 2 * GOOD_LINES_EACH_SIDE) {
      throw new Error(`ferry enqueue --stdin exited ${code} with ${ids.length} ids; stderr:\n${stderr}`)
    }
    if (lineBytes > 0 && !/^line \d+: longer than \d+ bytes/m.test(stderr)) {
      throw new Error(`the long line was not reported as too long; stderr:\n${stderr}`)
    }
    if (peakRssBytes === 0) throw new Error('could not read the peak RSS of the ferry process')
    return { seconds, peakRssBytes }
  })
}

/** Good lines, then a `lineBytes`-byte line (none for 0), then good lines, written in 1 MiB pieces. */
function writeInput(path: string, lineBytes: number): void {
  const fd = openSync(path, 'w')
  try {
    const good = (n: number): string => `${JSON.stringify({ name: 'bench.good', payload: { n } })}\n`
    for (let n = 0; n < GOOD_LINES_EACH_SIDE; n++) writeSync(fd, good(n))
    if (lineBytes > 0) {
      const opening = '{"name":"huge","payload":"'
      const closing = '"}'
      let fill = lineBytes - opening.length - closing.length
      writeSync(fd, opening)
      const piece = Buffer.alloc(MIB, 'x')
      while (fill > 0) {
        const length = Math.min(fill, piece.length)
        writeSync(fd, piece, 0, length)
        fill -= length
      }
      writeSync(fd, `${closing}\n`)
    }
    for (let n = GOOD_LINES_EACH_SIDE; n < 2 * GOOD_LINES_EACH_SIDE; n++) writeSync(fd, good(n))
  } finally {
    closeSync(fd)
  }
}

/** VmHWM of a process in bytes, 0 once it has exited (a zombie has no memory lines). */
function readPeakRss(pid: number): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match === null ? 0 : Number(match[1]) * 1024
  } catch {
    return 0
  }
}

export const enqueueLongLineScenario: ScenarioDef = {
  name: 'enqueue-long-line',
  summary:
    '`ferry enqueue --stdin` on one 16/32/64/100 MiB line among 6 good lines: wall time and peak RSS (durability full)',
  fullSize: 100,
  // The smallest long line must still pass MAX_LINE_BYTES (1 MiB + 64 KiB): 1.6 MiB here.
  quickSize: 10,
  run: enqueueLongLine,
  targets: {},
}
