/**
 * A wall clock that a test can step, for processes of its own (`ferry work`, a PostgreSQL or
 * Redis server): tests/support/clock-shim.c, built here with the C compiler and preloaded into
 * them, adds an offset that the test writes to a file, so the test moves their wall clock forward
 * or back while they run. Their monotonic clock is left alone, exactly as when an NTP step or
 * `date -s` moves a real machine's clock: CLOCK_MONOTONIC never steps.
 *
 * When no C compiler is here, tests/support/services.ts says what happens: skipped with the
 * reason, or a failure under CI (whose machines have one: better-sqlite3 is built with it).
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'

import { defer } from './cleanup.js'

const SOURCE = fileURLToPath(new URL('./clock-shim.c', import.meta.url))

export interface FakeClock {
  /** The environment that puts a process on this clock (merge it into the process's env). */
  readonly env: Record<string, string>
  /** Sets the clock to real time plus this many seconds (negative: behind), for every process on it. */
  setOffset(seconds: number): void
}

let built: { library: string } | { error: string } | null = null

/** The shim, compiled once per source text into the temp directory (shared by test processes). */
function shimLibrary(): { library: string } | { error: string } {
  if (built !== null) return built
  const source = readFileSync(SOURCE)
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 16)
  const library = join(tmpdir(), `ferry-clock-shim-${hash}.so`)
  if (existsSync(library)) return (built = { library })
  const building = `${library}.${process.pid}`
  const cc = spawnSync('cc', ['-shared', '-fPIC', '-O2', '-o', building, SOURCE], { encoding: 'utf8' })
  if (cc.error !== undefined || cc.status !== 0) {
    return (built = {
      error: `cannot build tests/support/clock-shim.c with cc: ${cc.error?.message ?? cc.stderr}`,
    })
  }
  // Readable by a server that runs as another user (PostgreSQL as postgres); renamed into place
  // whole, so a test process running beside this one never loads a half-written file.
  chmodSync(building, 0o755)
  renameSync(building, library)
  return (built = { library })
}

/** Why a fake clock cannot be had here, or null (for tests/support/services.ts). */
export function fakeClockUnavailable(): string | null {
  const shim = shimLibrary()
  return 'error' in shim ? shim.error : null
}

/** A clock at real time to start with; its file is removed when the test ends. */
export function fakeClock(t: TestContext): FakeClock {
  const shim = shimLibrary()
  if ('error' in shim) throw new Error(shim.error)
  const dir = mkdtempSync(join(tmpdir(), 'ferry-fake-clock-'))
  chmodSync(dir, 0o755)
  const file = join(dir, 'offset')
  defer(t, () => rmSync(dir, { recursive: true, force: true }))
  const setOffset = (seconds: number): void => {
    // Written to a new file and renamed over the old one: a reader never sees it half written.
    writeFileSync(`${file}.new`, `${Math.trunc(seconds)}\n`, { mode: 0o644 })
    renameSync(`${file}.new`, file)
  }
  setOffset(0)
  return { env: { LD_PRELOAD: shim.library, FERRY_CLOCK_OFFSET_FILE: file }, setOffset }
}
