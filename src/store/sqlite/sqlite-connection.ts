/**
 * The one connection a SqliteStore writes through: the database opened with its pragmas, its
 * prepared statements (each prepared once, on first use, and reused), and the read and write
 * transactions every Store call runs in, with the checks that follow each commit (the file is
 * still the one at the path; the WAL has not outgrown its limit).
 */
import Database from 'better-sqlite3'
import { existsSync, statSync } from 'node:fs'
import { StoreUnavailableError } from '../../core/errors.js'
import { messageOf } from '../params.js'
import { wrapDriverError } from '../kernel/driver-errors.js'
import { sql } from './generated/assets.js'
import { nativeAddonPath } from './sqlite-addon.js'
import { createFileWithMode, fileLostError, SqliteFile } from './sqlite-file.js'
import type { ResolvedSqliteOptions, SqliteDurability } from './sqlite-options.js'

export type Statement = Database.Statement<unknown[], unknown>
/** A query file of sql/, by its name. */
export type SqlName = keyof typeof sql

/** Write transactions between two checks of the WAL's size. */
const WAL_CHECK_EVERY = 256
// Run with exec, never kept as prepared statements: SQLite applies this pragma when a statement
// is prepared, so a prepared 'synchronous = FULL' switched a 'normal' store to FULL at open.
const SYNC_NORMAL = 'PRAGMA synchronous = NORMAL'
const SYNC_FULL = 'PRAGMA synchronous = FULL'

export class SqliteConnection {
  readonly db: Database.Database
  /** The file it opened, to tell when the path names another (deleted, replaced). */
  readonly file: SqliteFile
  private readonly path: string
  private readonly durability: SqliteDurability
  private readonly walLimitBytes: number
  private readonly statements = new Map<SqlName, Statement>()
  private readonly rowStatements = new Map<string, Statement>()
  private readonly begin: Statement
  private readonly commit: Statement
  private readonly rollback: Statement
  private writesSinceWalCheck = 0
  /** Set once the file at the path is no longer the one this connection writes to. */
  private lost: StoreUnavailableError | null = null

  /** `onLost`: called once, when the connection finds its file deleted or replaced. */
  constructor(
    { path, durability, busyTimeoutMs, walLimitBytes, fileMode, create }: ResolvedSqliteOptions,
    private readonly onLost: () => void,
  ) {
    this.path = path
    this.durability = durability
    this.walLimitBytes = walLimitBytes
    if (!create && !existsSync(path)) {
      throw new StoreUnavailableError(
        `no SQLite database at ${path}: the file does not exist (check the path; \`ferry migrate\` creates a new database)`,
        { retryable: false },
      )
    }
    try {
      if (create) createFileWithMode(path, fileMode)
      // fileMustExist: a file deleted since the check above is an error too, not created.
      this.db = new Database(path, {
        timeout: busyTimeoutMs,
        fileMustExist: !create,
        ...(nativeAddonPath === undefined ? {} : { nativeBinding: nativeAddonPath }),
      })
      this.file = new SqliteFile(path)
      // Takes effect only when the file is new. A serial enqueue's commit writes two pages (the row's
      // and its index entry's) and fsyncs them: 296 µs with 8 KiB pages against 256 µs with 4 KiB
      // (serial inserts of Ferry's row, medians of 9 interleaved rounds of 2,000), the single
      // commit every web request's enqueue and every worker's settle pays.
      // Large pages help only big transactions of big rows: 10,000 jobs of 520 bytes in one
      // enqueueMany took 14.7 µs a job with 8 KiB pages against 20.8 µs with 4 KiB (small payloads:
      // 5.2 against 4.8). Files made with 8 KiB pages by earlier versions keep them.
      this.db.pragma('page_size = 4096')
      this.db.pragma('journal_mode = WAL')
      // better-sqlite3 builds SQLite with WAL defaulting to NORMAL: FULL must be asked for.
      this.db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`)
      this.db.pragma(`journal_size_limit = ${walLimitBytes}`)
    } catch (error) {
      throw new StoreUnavailableError(`cannot open SQLite database ${path}: ${messageOf(error)}`, {
        cause: error,
      })
    }
    this.begin = this.db.prepare('BEGIN IMMEDIATE')
    this.commit = this.db.prepare('COMMIT')
    this.rollback = this.db.prepare('ROLLBACK')
  }

  /** The prepared statement of a query file of sql/. */
  statement(name: SqlName): Statement {
    let statement = this.statements.get(name)
    if (statement === undefined) {
      statement = this.db.prepare(sql[name])
      this.statements.set(name, statement)
    }
    return statement
  }

  /**
   * The prepared statement of a query file of sql/ whose last line is one VALUES tuple, written
   * `rows` times: one statement that inserts that many rows.
   */
  rowsStatement(name: SqlName, rows: number): Statement {
    const key = `${name}*${rows}`
    let statement = this.rowStatements.get(key)
    if (statement === undefined) {
      const text = sql[name].trimEnd()
      const cut = text.lastIndexOf('\n') + 1
      const tuple = text.slice(cut)
      statement = this.db.prepare(text.slice(0, cut) + Array.from({ length: rows }, () => tuple).join(',\n'))
      this.rowStatements.set(key, statement)
    }
    return statement
  }

  /**
   * Runs fn in a BEGIN IMMEDIATE transaction; commits (and, with 'full', fsyncs) before returning.
   *
   * `sync: false` commits without the fsync even under 'full', for a claim alone: losing a claim to
   * a power cut only puts its jobs back to ready (their worker died with the machine anyway), and
   * the next synced commit makes it durable, since an fsync of the WAL covers every earlier
   * write to it. It takes the claim's fsync out of the wake-up path: 2.2 of the 2.7 ms from an
   * enqueue in another process to the handler's start (bench wake-latency, p50, before this).
   *
   * fn gets the time read once the write lock is held: BEGIN IMMEDIATE may wait up to busy_timeout
   * for another process's commit, and a lease or run time computed from a clock read before that
   * wait would be short by it (the chaos run found claims handed out with their lease half gone).
   */
  write<T>(fn: (lockedAt: number) => T, { sync = true }: { sync?: boolean } = {}): T {
    let result: T
    const relaxed = !sync && this.durability === 'full'
    try {
      if (relaxed) this.db.exec(SYNC_NORMAL)
      this.begin.run()
    } catch (error) {
      if (relaxed) this.db.exec(SYNC_FULL)
      throw wrapDriverError(error, describeDriverError(this.path))
    }
    try {
      result = fn(Date.now())
      this.commit.run()
    } catch (error) {
      if (this.db.inTransaction) this.rollback.run()
      throw wrapDriverError(error, describeDriverError(this.path))
    } finally {
      if (relaxed) this.db.exec(SYNC_FULL)
    }
    // After the commit: a file deleted or replaced while this transaction ran got it too. One stat,
    // about 2 µs, against a commit's fsync of milliseconds.
    this.assertSameFile()
    if (++this.writesSinceWalCheck >= WAL_CHECK_EVERY) {
      this.writesSinceWalCheck = 0
      this.limitWal()
    }
    return result
  }

  /** Runs fn, a read, outside any transaction of its own. */
  read<T>(fn: () => T): T {
    this.assertSameFile()
    try {
      return fn()
    } catch (error) {
      throw wrapDriverError(error, describeDriverError(this.path))
    }
  }

  /** Throws the error of a lost file, once one was found: the connection is of no use since. */
  assertNotLost(): void {
    if (this.lost !== null) throw this.lost
  }

  /**
   * Throws, for good, once the path no longer names the file this connection opened (a restore
   * that moved another file into place, a cleanup that removed it).
   */
  assertSameFile(): void {
    this.assertNotLost()
    const found = this.file.atPath()
    if (found === 'same') return
    this.lost = fileLostError(this.path, found)
    this.onLost()
    throw this.lost
  }

  close(): void {
    if (this.db.open) this.db.close()
  }

  /**
   * SQLite checkpoints the WAL on its own, but a reader that is always active can stop it from
   * ever restarting the WAL, which then grows without bound: past the limit, force it.
   */
  private limitWal(): void {
    let size: number
    try {
      size = statSync(`${this.path}-wal`).size
    } catch {
      return
    }
    if (size > this.walLimitBytes) this.db.pragma('wal_checkpoint(TRUNCATE)')
  }
}

/** better-sqlite3's own errors; any other passes through. */
function describeDriverError(path: string): (error: unknown) => string | null {
  return (error) =>
    error instanceof Database.SqliteError ? `SQLite ${path}: ${error.code}: ${error.message}` : null
}
