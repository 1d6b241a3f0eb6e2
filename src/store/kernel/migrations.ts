import { MigrationRequiredError, SchemaTooNewError } from '../../core/errors.js'
import type { MigrateResult } from '../store.js'

/**
 * One step of a store's schema: a migration file of a SQL store, or a key layout of Redis. A
 * store's version is the number of the last step it has applied.
 */
export interface SchemaStep {
  version: number
  name: string
}

/** How a store names itself and its version in errors: "schema ferry has version 3". */
export interface SchemaSubject {
  /** "schema ferry", "/var/lib/app/jobs.db", "Redis namespace ferry". */
  subject: string
  /** "version", "schema version", "key layout version". */
  versionNoun: string
}

/**
 * What every store does around its migrations, whatever it stores them in: the latest version it
 * knows (the last of its embedded steps), which steps a store at some version still needs, the
 * errors for a store too old or too new, and the MigrateResult that `ferry migrate` prints. Each
 * backend keeps only how it reads and records its version and applies one step, in its own
 * transaction.
 */
export class SchemaVersions<Step extends SchemaStep> {
  readonly latest: number

  constructor(
    readonly steps: readonly Step[],
    private readonly naming: SchemaSubject,
  ) {
    this.latest = steps.reduce((max, step) => Math.max(max, step.version), 0)
  }

  /** The steps of a store at fromVersion that it has not applied yet, in order. */
  pending(fromVersion: number): Step[] {
    this.assertKnown(fromVersion)
    return this.steps.filter((step) => step.version > fromVersion)
  }

  /** What migrate() reports once the store at fromVersion has applied every pending step. */
  result(fromVersion: number): MigrateResult {
    return {
      fromVersion,
      toVersion: Math.max(fromVersion, this.latest),
      applied: this.pending(fromVersion).map((step) => step.name),
    }
  }

  /** A store migrated by a newer Ferry must not be written by this one. */
  assertKnown(version: number): void {
    if (version > this.latest) throw this.tooNew(version)
  }

  /** What a store opened with `migrate: false` checks: its version is exactly this Ferry's. */
  assertCurrent(version: number): void {
    this.assertKnown(version)
    if (version < this.latest) {
      throw new MigrationRequiredError(
        `${this.describe(version)}; this Ferry needs ${this.latest}: run ferry migrate`,
      )
    }
  }

  tooNew(version: number): SchemaTooNewError {
    return new SchemaTooNewError(
      `${this.describe(version)}, newer than this Ferry's ${this.latest}: upgrade Ferry`,
    )
  }

  private describe(version: number): string {
    return `${this.naming.subject} has ${this.naming.versionNoun} ${version}`
  }
}

/** Steps known only by name, numbered in order from 1 (Redis's key layouts). */
export function numberedSteps(names: readonly string[]): SchemaStep[] {
  return names.map((name, index) => ({ version: index + 1, name }))
}
