/**
 * PostgreSQL's migrate() beyond migrations: the functions of the schema (src/store/postgres/
 * functions/) are applied again when their text changes and dropped when their file is gone, and
 * a schema that the releases before functions/ migrated (their migrations defined the functions)
 * is taken over with its jobs, ending as a fresh schema does.
 *
 * That older schema is tests/fixtures/postgres/schema-version-9.sql: pg_dump's copy of a schema
 * that the last of those releases (commit 4260f7c, schema version 9) migrated and wrote jobs into,
 * made by scripts/postgres-fixture.mjs. A snapshot rather than that commit's migration files read
 * from git, so that the test runs the same in a shallow clone.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'

import { functions } from '../../src/store/postgres/generated/assets.js'
import { adminQuery, postgresUnreachableReason, tempSchema } from '../support/postgres-harness.js'
import { skipUnlessAvailable } from '../support/services.js'
import { newJob } from '../support/store-harness.js'

const LEASE_MS = 60_000
/** What the fixture's schema name was replaced with. */
const FIXTURE_SCHEMA = '__schema__'
const VERSION_9 = readFileSync(new URL('../fixtures/postgres/schema-version-9.sql', import.meta.url), 'utf8')

/** The signatures of the schema's functions, without the schema. */
async function functionSignatures(schema: string): Promise<string[]> {
  const rows = await adminQuery<{ signature: string }>(
    `SELECT p.oid::regprocedure::text AS signature FROM pg_proc AS p
     WHERE p.pronamespace = $1::regnamespace ORDER BY 1`,
    [`"${schema}"`],
  )
  return rows.map((row) => row.signature.replace(`${schema}.`, ''))
}

/** The schema's Ferry tables: their columns, indexes and settings, with the schema name taken out. */
async function tableLayout(schema: string): Promise<unknown> {
  const columns = await adminQuery(
    `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
     WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
    [schema],
  )
  const indexes = await adminQuery<{ indexdef: string }>(
    'SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname',
    [schema],
  )
  const relations = await adminQuery(
    `SELECT c.relname, c.relkind, c.relpersistence, c.reloptions FROM pg_class AS c
     WHERE c.relnamespace = $1::regnamespace ORDER BY c.relname`,
    [`"${schema}"`],
  )
  return JSON.parse(JSON.stringify({ columns, indexes, relations }).replaceAll(schema, 'S'))
}

/** Creates the schema as the releases before functions/ left it, with their jobs (the fixture). */
async function restoreVersion9(schema: string): Promise<void> {
  await adminQuery(VERSION_9.replaceAll(FIXTURE_SCHEMA, schema))
}

test('PostgreSQL migrations', skipUnlessAvailable(await postgresUnreachableReason()), async (t) => {
  await t.test('a fresh schema has one function per file of functions/, and nothing else', async (t) => {
    const { open, schema } = tempSchema(t)
    await open()
    const names = (await functionSignatures(schema)).map((signature) => signature.split('(')[0])
    assert.deepEqual(names.sort(), functions.map((fn) => fn.name).sort())
    const recorded = await adminQuery<{ name: string }>(
      `SELECT name FROM "${schema}".functions ORDER BY name`,
    )
    assert.deepEqual(
      recorded.map((row) => row.name),
      functions.map((fn) => fn.name).sort(),
    )
  })

  await t.test(
    'a function whose file changed is applied again, and one whose file is gone is dropped',
    async (t) => {
      const { open, schema } = tempSchema(t)
      const first = await open()
      await first.close()
      // As a schema left by a Ferry whose claim.sql differed (another text, another overload) and
      // which had a function that this Ferry's files no longer define.
      await adminQuery(
        `UPDATE "${schema}".functions SET sha256 = 'an older text' WHERE name = 'claim';
         CREATE FUNCTION "${schema}".claim(p_queue text) RETURNS integer LANGUAGE sql AS $$ SELECT 1 $$;
         CREATE FUNCTION "${schema}".retired(p_x integer) RETURNS integer LANGUAGE sql AS $$ SELECT p_x $$;
         INSERT INTO "${schema}".functions (name, sha256) VALUES ('retired', 'whatever')`,
      )
      const store = await open()
      const signatures = await functionSignatures(schema)
      assert.deepEqual(
        signatures.filter((signature) => signature.startsWith('claim(')),
        ['claim(text[],integer,bigint,text,bigint,text,boolean,text[])'],
        "claim's old overload is gone, today's is there",
      )
      assert.ok(
        !signatures.some((signature) => signature.startsWith('retired(')),
        'the retired function is dropped',
      )
      const recorded = await adminQuery<{ name: string; sha256: string }>(
        `SELECT name, sha256 FROM "${schema}".functions WHERE name IN ('claim', 'retired')`,
      )
      assert.equal(recorded.length, 1)
      assert.notEqual(recorded[0]!.sha256, 'an older text')
      // And the store works with what was applied.
      await store.enqueue({ jobs: [newJob()] })
      const claimed = await store.claim({ queues: ['default'], limit: 1, leaseMs: LEASE_MS, workerId: 'w' })
      assert.equal(claimed.length, 1)
    },
  )

  await t.test(
    'a store opened with migrate: false refuses a schema whose functions are not its own',
    async (t) => {
      const { open, schema } = tempSchema(t)
      await (await open()).close()
      await adminQuery(`UPDATE "${schema}".functions SET sha256 = 'an older text' WHERE name = 'settle'`)
      await assert.rejects(open({ migrate: false }), (error: unknown) => {
        assert.equal((error as { code?: string }).code, 'migration_required')
        assert.match(
          (error as Error).message,
          /functions other than this Ferry's \(settle\): run ferry migrate/,
        )
        return true
      })
    },
  )

  await t.test(
    'a schema migrated by the releases before functions/ keeps its jobs and ends as a fresh one',
    async (t) => {
      const old = tempSchema(t)
      await restoreVersion9(old.schema)
      const [version] = await adminQuery<{ version: number }>(
        `SELECT max(version) AS version FROM "${old.schema}".migrations`,
      )
      assert.equal(version!.version, 9, 'the fixture is at version 9, the last layout before functions/')
      // Jobs the old store wrote: one ready, one leased, one with a unique key.
      const before = await adminQuery(`SELECT * FROM "${old.schema}".jobs ORDER BY id`)
      assert.deepEqual(
        before.map((row) => [row.name, row.state, row.unique_key]),
        [
          ['old-ready', 'ready', null],
          ['old-leased', 'active', null],
          ['old-unique', 'ready', 'k'],
        ],
      )
      const oldSignatures = await functionSignatures(old.schema)

      const store = await old.open()
      assert.deepEqual(
        await adminQuery(`SELECT * FROM "${old.schema}".jobs ORDER BY id`),
        before.map((row) => ({
          ...row,
          group_key: null,
          expires_at: null,
          meta: null,
          held_unique_key: row.unique_key,
          unique_until: null,
          unique_expires_at: null,
          keep_for_ms: null,
          progress: null,
          logs: null,
        })),
        'jobs kept, each without a group or a start deadline (migration 0013), or meta (0015), its unique key held until the purge (0016), without keepForMs (0017), progress or logs (0018)',
      )

      const fresh = tempSchema(t)
      await fresh.open()
      const signatures = await functionSignatures(fresh.schema)
      assert.deepEqual(await functionSignatures(old.schema), signatures)
      assert.deepEqual(await tableLayout(old.schema), await tableLayout(fresh.schema))
      assert.ok(
        oldSignatures.some((signature) => !signatures.includes(signature)),
        "the fixture has overloads that today's functions do not, and they are dropped",
      )

      // The old jobs go on: the leased one settles with its lease, the others are claimed.
      const leased = before.find((row) => row.name === 'old-leased')!
      assert.deepEqual(
        (
          await store.settle({
            settlements: [
              { kind: 'completed', id: String(leased.id), leaseToken: String(leased.lease_token) },
            ],
          })
        ).settled,
        ['ok'],
      )
      const claimed = await store.claim({ queues: ['default'], limit: 10, leaseMs: LEASE_MS, workerId: 'w' })
      assert.deepEqual(claimed.map((job) => job.name).sort(), ['old-ready', 'old-unique'])
    },
  )
})
