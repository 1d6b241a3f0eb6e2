/**
 * The database file as a SqliteStore holds it: created with the permission bits asked for, and
 * known by its identity (device and inode), so that the store can tell when the path no longer
 * names the file it writes to.
 */
import { chmodSync, closeSync, openSync, statSync, type Stats } from 'node:fs'
import { resolve } from 'node:path'
import { StoreUnavailableError } from '../../core/errors.js'

/** What the path names now, against the file the store opened. */
export type FileAtPath = 'same' | 'deleted' | 'replaced'

export class SqliteFile {
  readonly absolutePath: string
  /** Its permission bits, for the files made beside it that every process using it must write. */
  readonly mode: number
  private readonly dev: number
  private readonly ino: number

  /** The file at this path now, which must exist. */
  constructor(path: string) {
    this.absolutePath = resolve(path)
    const stats = statSync(this.absolutePath)
    this.dev = stats.dev
    this.ino = stats.ino
    this.mode = stats.mode & 0o777
  }

  /** The same for every process that has this file open, whatever path it opened it by. */
  get identity(): string {
    return `${this.dev}-${this.ino}`
  }

  /** Whether the path still names this file ('same' too when it cannot be told). */
  atPath(): FileAtPath {
    let found: Stats
    try {
      found = statSync(this.absolutePath)
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'deleted' : 'same'
    }
    return found.dev === this.dev && found.ino === this.ino ? 'same' : 'replaced'
  }
}

/**
 * The error of a store whose file was deleted or replaced while it had it open: better-sqlite3
 * keeps writing to the open file, and every commit it acknowledges is lost with the old file,
 * while a new process at the path starts an empty queue.
 */
export function fileLostError(path: string, found: Exclude<FileAtPath, 'same'>): StoreUnavailableError {
  return new StoreUnavailableError(
    `SQLite ${path}: the database file was ${found === 'deleted' ? 'deleted' : 'replaced by another file'} ` +
      'while this store had it open, so what it writes goes to a file no other process can see; ' +
      'stop every process using it, then open the store again',
    { retryable: false },
  )
}

/**
 * Creates the database file with these permission bits, exactly (whatever the umask), when it
 * does not exist yet; SQLite then creates its -wal and -shm files with the same bits.
 */
export function createFileWithMode(path: string, mode: number): void {
  let fd: number
  try {
    fd = openSync(path, 'wx', mode)
  } catch (error) {
    // It exists (perhaps another process just created it): its own mode stands.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return
    throw error
  }
  try {
    chmodSync(path, mode)
  } finally {
    closeSync(fd)
  }
}
