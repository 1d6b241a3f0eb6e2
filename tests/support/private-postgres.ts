/**
 * A PostgreSQL server of a test's or a benchmark's own: initdb into a temp directory, started on a
 * free port of 127.0.0.1, for what must not happen to the shared test server (restarting it) or
 * what it cannot show (its autovacuum is off, and other tests' sessions share its vacuum horizon).
 * Stopped and its directory removed when the test ends, whatever happened, and at the latest when
 * this process exits.
 *
 * initdb and postgres refuse to run as root: as root, they run as the `postgres` OS user (runuser),
 * with the directory handed to that user. The binaries are found in /usr/lib/postgresql/<version>/bin
 * (Debian, Ubuntu), else through `pg_config --bindir`.
 */
import { execFile, execFileSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { promisify } from 'node:util'

import { defer } from './cleanup.js'

const run = promisify(execFile)
const DEBIAN_ROOT = '/usr/lib/postgresql'
const RUN_AS = 'postgres'

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres, trust authentication. */
  readonly url: string
  readonly port: number
  /** The major version, e.g. "15". */
  readonly version: string
  /** The server's log (pg_ctl -l): autovacuum writes its reports here when asked to. */
  readonly logFile: string
  /** pg_ctl restart -m fast: every connection is dropped, the server is back when it resolves. */
  restart(): Promise<void>
  /** Stops the server (immediate) and removes its directory. Idempotent. */
  stop(): Promise<void>
}

/** The directory of initdb and pg_ctl, or null when this machine has none. */
export function postgresBinDir(): string | null {
  if (existsSync(DEBIAN_ROOT)) {
    const versions = readdirSync(DEBIAN_ROOT)
      .filter((name) => /^\d+$/.test(name) && existsSync(join(DEBIAN_ROOT, name, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a))
    if (versions.length > 0) return join(DEBIAN_ROOT, versions[0]!, 'bin')
  }
  try {
    const dir = execFileSync('pg_config', ['--bindir'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    const bin = dir.trim()
    return existsSync(join(bin, 'initdb')) ? bin : null
  } catch {
    return null
  }
}

/** Why a private server cannot be started here, or null when it can (for tests/support/services.ts). */
export function privatePostgresUnavailable(): string | null {
  if (postgresBinDir() === null) {
    return `no initdb found (in ${DEBIAN_ROOT}/<version>/bin or through pg_config --bindir): install the PostgreSQL server`
  }
  if (isRoot() && ownerOf(RUN_AS) === null) {
    return `running as root, and there is no '${RUN_AS}' user to run initdb and postgres as`
  }
  return null
}

export interface PrivatePostgresOptions {
  /** More environment for the server's processes (a preloaded library: tests/support/fake-clock.ts). */
  env?: Record<string, string>
  /**
   * Where its directory goes (default: the OS temp directory). A benchmark puts it under
   * .bench-tmp/, on the disk its figures are for: the temp directory may be a RAM disk.
   */
  parentDir?: string
  /**
   * fsync on, as a production server runs (a benchmark's figures). Default false: a test's server
   * lives for one test, and no test crashes it.
   */
  durable?: boolean
  /** Server settings (-c name=value) on top of PostgreSQL's defaults and max_connections=40. */
  settings?: Readonly<Record<string, string>>
}

/** Starts a private server for one test; it is stopped and removed when the test ends. */
export async function privatePostgres(
  t: TestContext,
  options: PrivatePostgresOptions = {},
): Promise<PrivatePostgres> {
  const server = await startPrivatePostgres(options)
  defer(t, () => server.stop())
  return server
}

export async function startPrivatePostgres({
  env = {},
  parentDir = tmpdir(),
  durable = false,
  settings = {},
}: PrivatePostgresOptions = {}): Promise<PrivatePostgres> {
  const unavailable = privatePostgresUnavailable()
  const bin = postgresBinDir()
  if (unavailable !== null || bin === null) throw new Error(`no private PostgreSQL server: ${unavailable}`)
  const dir = mkdtempSync(join(parentDir, 'ferry-pg-'))
  const data = join(dir, 'data')
  const logFile = join(dir, 'server.log')
  const asOwner = isRoot() ? ownerOf(RUN_AS) : null
  if (asOwner !== null) chownSync(dir, asOwner.uid, asOwner.gid)
  // As root, each command runs as the postgres user, from a directory that user can enter.
  const command = async (
    file: string,
    args: string[],
    extraEnv: Record<string, string> = {},
  ): Promise<void> => {
    // Through env(1), so the variables reach the server whatever runuser keeps of the environment.
    const withEnv = [...Object.entries(extraEnv).map(([key, value]) => `${key}=${value}`), file, ...args]
    const [program, argv] =
      asOwner === null ? ['env', withEnv] : ['runuser', ['-u', RUN_AS, '--', 'env', ...withEnv]]
    try {
      await run(program, argv, { cwd: dir, timeout: 60_000 })
    } catch (error) {
      const { stderr, stdout } = error as { stderr?: string; stdout?: string }
      throw new Error(`${[file, ...args].join(' ')} failed: ${stderr || stdout || String(error)}`, {
        cause: error,
      })
    }
  }
  const pgCtl = (...args: string[]): Promise<void> => command(join(bin, 'pg_ctl'), ['-D', data, ...args], env)

  let started = false
  const stopNow = (): void => {
    if (started) {
      const [program, argv] =
        asOwner === null
          ? [join(bin, 'pg_ctl'), ['-D', data, 'stop', '-m', 'immediate', '-w']]
          : [
              'runuser',
              ['-u', RUN_AS, '--', join(bin, 'pg_ctl'), '-D', data, 'stop', '-m', 'immediate', '-w'],
            ]
      try {
        execFileSync(program, argv, { cwd: dir, stdio: 'ignore', timeout: 30_000 })
      } catch {
        // Already stopped, or never came up: the directory goes anyway.
      }
      started = false
    }
    rmSync(dir, { recursive: true, force: true })
  }
  // A test process that ends without its cleanup (an uncaught error, process.exit) still stops it.
  process.once('exit', stopNow)
  const stop = async (): Promise<void> => {
    process.off('exit', stopNow)
    if (started) {
      await pgCtl('stop', '-m', 'immediate', '-w').catch(() => {})
      started = false
    }
    rmSync(dir, { recursive: true, force: true })
  }

  try {
    await command(join(bin, 'initdb'), [
      '-D',
      data,
      '-U',
      'postgres',
      '-A',
      'trust',
      '-E',
      'UTF8',
      ...(durable ? [] : ['--no-sync']),
    ])
    const port = await freePort()
    const serverSettings = { max_connections: '40', ...(durable ? {} : { fsync: 'off' }), ...settings }
    started = true
    await pgCtl(
      'start',
      '-w',
      '-t',
      '60',
      '-l',
      logFile,
      '-o',
      [
        `-h 127.0.0.1 -p ${port} -k ${dir}`,
        ...Object.entries(serverSettings).map(([name, value]) => `-c ${name}=${value}`),
      ].join(' '),
    )
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      port,
      version: readFileSync(join(data, 'PG_VERSION'), 'utf8').trim(),
      logFile,
      restart: () => pgCtl('restart', '-m', 'fast', '-w', '-t', '60', '-l', logFile),
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}

function isRoot(): boolean {
  return process.getuid?.() === 0
}

function ownerOf(name: string): { uid: number; gid: number } | null {
  try {
    const uid = Number(
      execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
    )
    const gid = Number(
      execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
    )
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null
  } catch {
    return null
  }
}

/** A port nobody listens on now (the server takes it a moment later). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject()))
    })
  })
}
