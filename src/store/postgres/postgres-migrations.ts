import { createHash } from 'node:crypto'
import type pg from 'pg'

import { MigrationRequiredError } from '../../core/errors.js'
import { SchemaVersions } from '../kernel/migrations.js'
import type { MigrateResult } from '../store.js'
import { functions, migrations } from './generated/assets.js'

/**
 * A schema's migrations and functions (functions/README.md): the migrations bring its tables and
 * indexes up to date, then every function whose file changed since it was last applied is applied
 * again, and one whose file is gone is dropped. The `migrations` table holds the applied versions,
 * the `functions` table the hash of the text each function was last applied with.
 */
export class PostgresSchema {
  readonly versions: SchemaVersions<(typeof migrations)[number]>
  private readonly schemaIdent: string

  constructor(private readonly schema: string) {
    this.versions = new SchemaVersions(migrations, { subject: `schema ${schema}`, versionNoun: 'version' })
    this.schemaIdent = quoteIdent(schema)
  }

  /** The schema's version, and the functions whose applied text is not this Ferry's (by name). */
  async state(client: pg.ClientBase): Promise<{ version: number; staleFunctions: string[] }> {
    const { rows } = await client.query<{ migrations: boolean; functions: boolean }>(
      'SELECT to_regclass($1) IS NOT NULL AS migrations, to_regclass($2) IS NOT NULL AS functions',
      [`${this.schemaIdent}.migrations`, `${this.schemaIdent}.functions`],
    )
    const tables = rows[0]!
    if (!tables.migrations) return { version: 0, staleFunctions: FUNCTIONS.map((fn) => fn.name) }
    const { rows: state } = await client.query<{ version: number; applied: Record<string, string> | null }>(
      `SELECT (SELECT coalesce(max(version), 0) FROM ${this.schemaIdent}.migrations) AS version, ` +
        (tables.functions
          ? `(SELECT json_object_agg(name, sha256) FROM ${this.schemaIdent}.functions) AS applied`
          : 'NULL::json AS applied'),
    )
    return { version: state[0]!.version, staleFunctions: staleFunctions(state[0]!.applied ?? {}) }
  }

  /** What a store opened with `migrate: false` checks: nothing for migrate() to do. */
  async assertCurrent(client: pg.ClientBase): Promise<void> {
    const { version, staleFunctions } = await this.state(client)
    this.versions.assertCurrent(version)
    if (staleFunctions.length > 0) {
      throw new MigrationRequiredError(
        `schema ${this.schema} has functions other than this Ferry's (${staleFunctions.join(', ')}): run ferry migrate`,
      )
    }
  }

  /**
   * Applies the pending migrations and the changed functions in one transaction, under an advisory
   * lock: concurrent starts queue there, and the later ones find the schema current and apply
   * nothing. Reads the schema first without the lock, so that opening a current schema (every
   * start) writes nothing and waits for nobody.
   */
  async migrate(client: pg.ClientBase): Promise<MigrateResult> {
    const before = await this.state(client)
    this.versions.assertKnown(before.version)
    if (before.version === this.versions.latest && before.staleFunctions.length === 0) {
      return this.versions.result(before.version)
    }
    try {
      await client.query('BEGIN')
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`ferry:migrate:${this.schema}`])
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.schemaIdent}`)
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.schemaIdent}.migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      )
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.schemaIdent}.functions (name text PRIMARY KEY, sha256 text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      )
      const { version: fromVersion } = await this.state(client)
      for (const migration of this.versions.pending(fromVersion)) {
        await client.query(this.interpolate(migration.sql))
        await client.query(`INSERT INTO ${this.schemaIdent}.migrations (version, name) VALUES ($1, $2)`, [
          migration.version,
          migration.name,
        ])
      }
      await this.applyFunctions(client)
      await client.query('COMMIT')
      return this.versions.result(fromVersion)
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    }
  }

  /** The SQL of a migration or function for this schema. */
  interpolate(text: string): string {
    return text.replaceAll(':"schema"', this.schemaIdent).replaceAll(":'schema'", `'${this.schema}'`)
  }

  /**
   * Applies each function whose text changed and drops each whose file is gone. A changed function
   * loses every overload of its name first, so that a file may change its parameters or its result
   * (which CREATE OR REPLACE refuses) and leaves no old signature behind.
   */
  private async applyFunctions(client: pg.ClientBase): Promise<void> {
    const { rows } = await client.query<{ name: string; sha256: string }>(
      `SELECT name, sha256 FROM ${this.schemaIdent}.functions`,
    )
    const applied = new Map(rows.map((row) => [row.name, row.sha256]))
    for (const fn of FUNCTIONS) {
      if (applied.get(fn.name) === fn.sha256) continue
      await this.dropOverloads(client, fn.name)
      await client.query(this.interpolate(fn.sql))
      await client.query(
        `INSERT INTO ${this.schemaIdent}.functions (name, sha256) VALUES ($1, $2)
         ON CONFLICT (name) DO UPDATE SET sha256 = excluded.sha256, applied_at = now()`,
        [fn.name, fn.sha256],
      )
    }
    for (const name of applied.keys()) {
      if (FUNCTIONS.some((fn) => fn.name === name)) continue
      await this.dropOverloads(client, name)
      await client.query(`DELETE FROM ${this.schemaIdent}.functions WHERE name = $1`, [name])
    }
  }

  private async dropOverloads(client: pg.ClientBase, name: string): Promise<void> {
    const { rows } = await client.query<{ signature: string }>(
      `SELECT p.oid::regprocedure::text AS signature FROM pg_proc AS p
       WHERE p.pronamespace = $1::regnamespace AND p.proname = $2`,
      [this.schemaIdent, name],
    )
    for (const { signature } of rows) await client.query(`DROP FUNCTION ${signature}`)
  }
}

/** The embedded functions with the hash their text is recorded under. */
const FUNCTIONS = functions.map((fn) => ({
  ...fn,
  sha256: createHash('sha256').update(fn.sql).digest('hex'),
}))

/** The functions whose applied hash is not this Ferry's, or that this Ferry no longer has. */
function staleFunctions(applied: Record<string, string>): string[] {
  const changed = FUNCTIONS.filter((fn) => applied[fn.name] !== fn.sha256).map((fn) => fn.name)
  const gone = Object.keys(applied).filter((name) => !FUNCTIONS.some((fn) => fn.name === name))
  return [...changed, ...gone]
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}
