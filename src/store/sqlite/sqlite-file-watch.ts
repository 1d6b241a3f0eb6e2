import type Database from 'better-sqlite3'
import { existsSync, unlinkSync, utimesSync, watch, type FSWatcher } from 'node:fs'
import { basename, dirname } from 'node:path'
import { createFileWithMode, type SqliteFile } from './sqlite-file.js'

/**
 * Where doorbells live: a RAM filesystem. Touching a file's times is a metadata change, and on a
 * journaling filesystem the next fsync commits it with the journal: a doorbell on the database's
 * own disk made every serial durable enqueue after it wait for that (store.enqueue, interleaved
 * with a bare insert in one process: 0.53× its rate ringing the database file, 0.58–0.63× with
 * the bell here, 0.64–0.68× with no bell; bench/RESULTS.md).
 */
const DOORBELL_DIR = '/dev/shm'

/** Re-checks after a file event: the WAL is written before the commit is visible to readers. */
const FOLLOW_UP_DELAYS_MS = [1, 4, 15, 50]
/**
 * The slow safety net, for file events that never come (some filesystems and mounts). It checks
 * after 1 s, then backs off to 8 s while it finds nothing the file events missed; once it does
 * catch a missed commit, it stays at 1 s for the life of the store. Any timer that fires once a
 * second cost an idle worker 0.10-0.12% of a core on this machine's VM (bench idle-cpu), over
 * the 0.1% budget by itself.
 */
const SAFETY_NET_MIN_MS = 1000
const SAFETY_NET_MAX_MS = 8000

/**
 * Cross-process wake-up for SQLite without polling the table: while a worker waits, watch the
 * database's directory for writes to the database or its WAL (inotify on Linux), and confirm each
 * with `PRAGMA data_version`, which changes only when another connection committed.
 *
 * The writer's WAL write reaches us about 2 ms before its commit returns, before the commit is
 * visible. So a Ferry writer that made work for others rings a doorbell after its commit: it
 * touches a file's times, an event that arrives when the commit is already visible. The bell is a
 * file of its own in DOORBELL_DIR, named by the database's identity (device and inode), which
 * every process that opened the database finds whatever its path; where there is no such
 * directory, or the bell cannot be made, the writer touches the database file itself (its
 * directory is watched anyway). Processes that share the database but not DOORBELL_DIR (two
 * containers with one volume) miss each other's bells and see commits by the WAL events and their
 * follow-up checks, within a few milliseconds.
 * A file event with no visible change (a WAL write, or a writer that is not Ferry) schedules a
 * few follow-up checks, so a commit landing just after it is seen within milliseconds, not at the
 * next safety-net tick.
 */
export interface SqliteFileWatchEvents {
  /** Another connection committed. */
  onChange: () => void
  /**
   * The database file itself was touched, moved or deleted (or the safety net ticked): the store
   * checks that the path still names the file it opened.
   */
  onDatabaseFileEvent: () => void
}

export class SqliteFileWatch {
  private readonly dataVersion: Database.Statement<unknown[], unknown>
  private readonly files: Set<string>
  private readonly databaseFile: string
  private readonly dir: string
  private readonly path: string
  /** The doorbell, or null where rings touch the database file (ring()). */
  private bell: string | null
  private readonly bellMode: number
  private watcher: FSWatcher | null = null
  private bellWatcher: FSWatcher | null = null
  private safetyNet: NodeJS.Timeout | null = null
  private safetyNetMs = SAFETY_NET_MIN_MS
  /** Set once the safety net caught a commit that no file event announced. */
  private eventsUnreliable = false
  private followUps: NodeJS.Timeout[] = []
  /** The data_version last acted on. Kept between waits, so a commit that lands after a worker's
   * empty claim but before it waits is noticed by the check at the start of the wait. */
  private lastVersion: number

  constructor(
    db: Database.Database,
    path: string,
    file: SqliteFile,
    private readonly events: SqliteFileWatchEvents,
  ) {
    this.dataVersion = db.prepare('PRAGMA data_version').pluck()
    this.path = path
    this.bell =
      process.platform === 'linux' && existsSync(DOORBELL_DIR)
        ? `${DOORBELL_DIR}/ferry-${file.identity}.bell`
        : null
    this.bellMode = file.mode
    this.dir = dirname(path)
    this.databaseFile = basename(path)
    this.files = new Set([this.databaseFile, `${this.databaseFile}-wal`])
    this.lastVersion = this.readVersion()
  }

  /** Watches while somebody waits; stops when nobody does. */
  setActive(active: boolean): void {
    if (active && this.watcher === null && this.safetyNet === null) {
      try {
        this.watcher = watch(this.dir, { persistent: true }, (_event, file) => {
          if (file === null || file === this.databaseFile) this.events.onDatabaseFileEvent()
          if (file === null || this.files.has(file)) this.onFileEvent()
        })
        this.watcher.on('error', () => {
          this.eventsUnreliable = true
          this.stopWatcher()
        })
      } catch {
        // No file events here (inotify limits, an unusual filesystem): the safety net must do.
        this.eventsUnreliable = true
      }
      this.watchBell()
      this.safetyNetMs = SAFETY_NET_MIN_MS
      this.armSafetyNet()
    } else if (!active) {
      this.stopWatcher()
      if (this.safetyNet !== null) clearTimeout(this.safetyNet)
      this.safetyNet = null
      this.clearFollowUps()
    }
  }

  /** Calls onChange if another connection committed since the last check. */
  check(): boolean {
    if (this.watcher === null && this.safetyNet === null) return false
    const version = this.readVersion()
    if (version === this.lastVersion) return false
    this.lastVersion = version
    this.clearFollowUps()
    this.events.onChange()
    return true
  }

  /** After a commit that made work for others: wakes their waits now that the commit is visible. */
  ring(): void {
    const now = new Date()
    if (this.bell !== null && (touched(this.bell, now) || (this.makeBell() && touched(this.bell, now))))
      return
    // No bell here, or one this process may not touch (another user's): ring the database file.
    this.bell = null
    try {
      utimesSync(this.path, now, now)
    } catch {
      // The safety net still sees the commit; a missing bell only costs latency.
    }
  }

  close(): void {
    this.setActive(false)
  }

  /**
   * Once the connection is closed: removes the doorbell if no process has the database open any
   * more, which SQLite's last close tells by removing the WAL. One that opens it later makes the
   * bell again with its first ring.
   */
  removeBellIfUnused(): void {
    if (this.bell === null || existsSync(`${this.path}-wal`)) return
    try {
      unlinkSync(this.bell)
    } catch {
      // Gone already, or another user's.
    }
  }

  private armSafetyNet(): void {
    this.safetyNet = setTimeout(() => {
      this.events.onDatabaseFileEvent()
      if (this.check()) this.eventsUnreliable = true
      if (this.safetyNet === null) return // the check woke the waiters, who stopped the watch
      this.safetyNetMs = this.eventsUnreliable
        ? SAFETY_NET_MIN_MS
        : Math.min(SAFETY_NET_MAX_MS, this.safetyNetMs * 2)
      this.armSafetyNet()
    }, this.safetyNetMs)
  }

  private onFileEvent(): void {
    if (this.check() || this.followUps.length > 0) return
    for (const delay of FOLLOW_UP_DELAYS_MS) {
      const timer = setTimeout(() => {
        this.followUps = this.followUps.filter((t) => t !== timer)
        this.check()
      }, delay)
      this.followUps.push(timer)
    }
  }

  private clearFollowUps(): void {
    for (const timer of this.followUps) clearTimeout(timer)
    this.followUps = []
  }

  private stopWatcher(): void {
    this.watcher?.close()
    this.watcher = null
    this.bellWatcher?.close()
    this.bellWatcher = null
  }

  /** Listens to the doorbell too, made first if no writer has rung it yet. */
  private watchBell(): void {
    const bell = this.bell
    if (bell === null || !this.makeBell()) return
    try {
      this.bellWatcher = watch(bell, { persistent: true }, () => this.check())
      // Gone (removed with /dev/shm's contents): the directory's events and the safety net remain.
      this.bellWatcher.on('error', () => {
        this.bellWatcher?.close()
        this.bellWatcher = null
      })
    } catch {
      this.bellWatcher = null
    }
  }

  /**
   * Makes the doorbell, unless it exists, with the database's permission bits, so every process
   * that can write the database can ring it. False, for good, where it cannot be made: rings touch
   * the database file.
   */
  private makeBell(): boolean {
    if (this.bell === null) return false
    try {
      createFileWithMode(this.bell, this.bellMode)
      return true
    } catch {
      this.bell = null
      return false
    }
  }

  private readVersion(): number {
    try {
      return this.dataVersion.get() as number
    } catch {
      return -1 // the database is closing
    }
  }
}

/** Sets a file's times to now; false if it cannot (missing, or not this process's to touch). */
function touched(path: string, now: Date): boolean {
  try {
    utimesSync(path, now, now)
    return true
  } catch {
    return false
  }
}
