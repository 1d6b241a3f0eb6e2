/**
 * A database file's migrations (migrations/): the `ferry_migrations` table holds the versions
 * applied, and the pending ones are applied in one write transaction, so that a file is never
 * left half migrated. What is the same on every store (which steps are pending, the errors for a
 * file too old or too new) is the kernel's runner (kernel/migrations.ts).
 */
import { SchemaVersions } from '../kernel/migrations.js'
import type { MigrateResult } from '../store.js'
import { migrations } from './generated/assets.js'
import type { SqliteConnection } from './sqlite-connection.js'

export class SqliteSchema {
  private readonly versions: SchemaVersions<(typeof migrations)[number]>

  constructor(
    private readonly connection: SqliteConnection,
    path: string,
  ) {
    this.versions = new SchemaVersions(migrations, { subject: path, versionNoun: 'schema version' })
  }

  migrate(): MigrateResult {
    const { db } = this.connection
    // The usual case, a file already at this version (every worker's start), is answered by a
    // read: no write lock to wait for behind other processes' commits, no transaction to commit.
    const current = this.connection.read(() => this.version())
    if (this.versions.pending(current).length === 0) return this.versions.result(current)
    return this.connection.write(() => {
      db.exec(
        'CREATE TABLE IF NOT EXISTS ferry_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT',
      )
      const fromVersion = this.version()
      const record = db.prepare('INSERT INTO ferry_migrations (version, name, applied_at) VALUES (?, ?, ?)')
      for (const migration of this.versions.pending(fromVersion)) {
        db.exec(migration.sql)
        record.run(migration.version, migration.name, Date.now())
      }
      return this.versions.result(fromVersion)
    })
  }

  /** What a store opened with `migrate: false` checks: the file has exactly this Ferry's version. */
  assertCurrent(): void {
    this.versions.assertCurrent(this.connection.read(() => this.version()))
  }

  private version(): number {
    const { db } = this.connection
    const exists = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ferry_migrations'")
      .pluck()
      .get()
    if (exists === undefined) return 0
    return (db.prepare('SELECT coalesce(max(version), 0) FROM ferry_migrations').pluck().get() as number) ?? 0
  }
}
