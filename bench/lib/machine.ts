import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os'
import { join, relative } from 'node:path'
import Database from 'better-sqlite3'
import { REPO_ROOT } from '../../tests/support/processes.js'
import { BENCH_TMP } from './temp.js'

export interface MachineFacts {
  node: string
  cpuCount: number
  cpuModel: string
  memoryGiB: number
  /** 1-minute load average when the run started: other sessions share this machine. */
  loadAverage: number
  /** Where the benchmark databases were written, e.g. "ext4 on /dev/vda (rw,relatime)". */
  filesystem: string
  sqliteVersion: string
  betterSqlite3Version: string
  /** The commit benchmarked, with "+ uncommitted changes" when the tree is dirty. */
  revision: string
}

export function machineFacts(): MachineFacts {
  return {
    node: process.version,
    cpuCount: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    loadAverage: Math.round(loadavg()[0]! * 100) / 100,
    filesystem: filesystemOf(BENCH_TMP),
    sqliteVersion: sqliteVersion(),
    betterSqlite3Version: packageVersion('better-sqlite3'),
    revision: revision(),
  }
}

function run(command: string, args: string[]): string | null {
  try {
    return execFileSync(command, args, {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim()
  } catch {
    return null
  }
}

function filesystemOf(dir: string): string {
  mkdirSync(dir, { recursive: true })
  const mount = run('findmnt', ['-n', '-o', 'FSTYPE,SOURCE,TARGET,OPTIONS', '-T', dir])
  if (mount !== null) {
    const [type, source, target, options] = mount.split(/\s+/)
    return `${type} on ${source} mounted at ${target} (${options})`
  }
  return run('stat', ['-f', '-c', '%T', dir]) ?? 'unknown'
}

function sqliteVersion(): string {
  const db = new Database(':memory:')
  try {
    return (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v
  } finally {
    db.close()
  }
}

function packageVersion(name: string): string {
  try {
    return (createRequire(import.meta.url)(`${name}/package.json`) as { version: string }).version
  } catch {
    return 'unknown'
  }
}

function revision(): string {
  const head = run('git', ['rev-parse', '--short', 'HEAD'])
  const dirty = (run('git', ['status', '--porcelain']) ?? '') !== ''
  return `${head ?? 'no commit yet'}${dirty ? ' + uncommitted changes' : ''}; src/ fingerprint ${sourceFingerprint()}`
}

/** A short hash of every file under src/: tells apart runs of uncommitted code. */
function sourceFingerprint(): string {
  const hash = createHash('sha256')
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.isFile()) hash.update(`${relative(REPO_ROOT, path)}\0`).update(readFileSync(path))
    }
  }
  walk(join(REPO_ROOT, 'src'))
  return hash.digest('hex').slice(0, 12)
}
