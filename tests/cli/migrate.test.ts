/**
 * `ferry migrate` says what it applied, on every store (opening a store used to migrate it first,
 * so it always said "up to date"), and `openStore(url, { migrate: false })` refuses a store that
 * needs migrating instead of migrating it.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'

import { MigrationRequiredError, migrateStore, openStore } from '../../src/index.js'
import { migrations as postgresMigrations } from '../../src/store/postgres/generated/assets.js'
import { KEY_LAYOUTS } from '../../src/store/redis/redis-scripts.js'
import { migrations as sqliteMigrations } from '../../src/store/sqlite/generated/assets.js'
import { postgresUnreachableReason, tempSchema } from '../support/postgres-harness.js'
import {
  dropNamespace,
  redisUnreachableReason,
  TEST_REDIS_URL,
  uniqueNamespace,
} from '../support/redis-harness.js'
import { skipUnlessAvailable } from '../support/services.js'
import { defer } from '../support/cleanup.js'
import { runCli } from '../support/processes.js'
import { tempDatabase } from '../support/sqlite-harness.js'

/**
 * What `ferry migrate` prints for a store that had no schema, then for one that is current. A
 * store's version is the number of its last step (steps are numbered in their names, and a number
 * may be left for a change made alongside).
 */
function expectedLines(names: readonly string[]): { fresh: string; current: string } {
  const version = lastVersion(names)
  return {
    fresh: `migrated from version 0 to ${version}, applied: ${names.join(', ')}\n`,
    current: `schema is up to date (version ${version}): nothing to apply\n`,
  }
}

function lastVersion(names: readonly string[]): number {
  return Number(names.at(-1)!.split('_', 1)[0])
}

/** Runs `ferry migrate` twice on a store that has no schema yet. */
async function migrateTwice(url: string): Promise<[string, string]> {
  const first = await runCli(url, ['migrate'])
  assert.equal(first.code, 0, first.stderr)
  assert.equal(first.stderr, '')
  const second = await runCli(url, ['migrate'])
  assert.equal(second.code, 0, second.stderr)
  return [first.stdout, second.stdout]
}

test('ferry migrate creates a missing SQLite database, lists what it applied, then says it is up to date', async (t) => {
  const db = tempDatabase(t)
  const { fresh, current } = expectedLines(sqliteMigrations.map((migration) => migration.name))
  assert.deepEqual(await migrateTwice(db.url), [fresh, current])
  assert.ok(existsSync(db.path))
})

test(
  'ferry migrate on a fresh PostgreSQL schema lists every migration it applied',
  skipUnlessAvailable(await postgresUnreachableReason()),
  async (t) => {
    const schema = tempSchema(t)
    const { fresh, current } = expectedLines(postgresMigrations.map((migration) => migration.name))
    assert.deepEqual(await migrateTwice(schema.url), [fresh, current])
  },
)

test(
  'ferry migrate on a fresh Redis namespace lists the key layouts it recorded',
  skipUnlessAvailable(await redisUnreachableReason()),
  async (t) => {
    const namespace = uniqueNamespace('migrate')
    defer(t, () => dropNamespace(namespace))
    const url = new URL(TEST_REDIS_URL)
    url.searchParams.set('namespace', namespace)
    const { fresh, current } = expectedLines(KEY_LAYOUTS)
    assert.deepEqual(await migrateTwice(url.toString()), [fresh, current])
  },
)

test('openStore with migrate: false refuses a store that needs migrating; migrateStore migrates it', async (t) => {
  const db = tempDatabase(t)
  await assert.rejects(openStore(db.url, { migrate: false }), MigrationRequiredError)
  const { fromVersion, toVersion, applied } = await migrateStore(db.url)
  assert.deepEqual(
    { fromVersion, toVersion, applied },
    {
      fromVersion: 0,
      toVersion: lastVersion(sqliteMigrations.map((m) => m.name)),
      applied: sqliteMigrations.map((m) => m.name),
    },
  )
  const store = await openStore(db.url, { migrate: false })
  await store.close()
  assert.deepEqual((await migrateStore(db.url)).applied, [])
})
