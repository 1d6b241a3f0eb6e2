/**
 * PostgreSQL's migrate() beyond migrations: the functions of the schema (src/store/postgres/
 * functions/) are applied again when their text changes and dropped when their file is gone, and
 * a schema that the releases before functions/ migrated (their migrations defined the functions)
 * is taken over with its jobs, ending as a fresh schema does.
 *
 * The older schema is built from those releases' own migration files, read from this repository's
 * history at the last commit before functions/: what existing databases ran, byte for byte, with no
 * copy of them kept beside today's. A checkout without that history (a shallow clone) skips it,
 * and fails under CI=true: fetch the history there.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { test } from 'node:test'

import { functions, migrations } from '../../src/store/postgres/generated/assets.js'
import { adminQuery, postgresUnreachableReason, tempSchema } from '../helpers/postgres-harness.js'
import { skipUnlessAvailable } from '../helpers/services.js'
import { newJob } from '../helpers/store-harness.js'

const LEASE_MS = 60_000
/** The last commit whose migrations defined the functions (schema version 9). */
const BEFORE_FUNCTIONS = '4260f7ced96180c7611ce1d701005f6bebc3456f'
const OLD_MIGRATIONS = 'src/store/postgres/migrations/'

function git(...args: string[]): string {
  return execFileSync('git', args, {
    cwd: new URL('../..', import.meta.url),
    encoding: 'utf8',
    stdio: 'pipe',
  })
}

/** Null when BEFORE_FUNCTIONS is in this checkout's history, else why not. */
function historyMissingReason(): string | null {
  try {
    git('cat-file', '-e', `${BEFORE_FUNCTIONS}^{commit}`)
    return null
  } catch {
    return `commit ${BEFORE_FUNCTIONS.slice(0, 12)} (the migrations before functions/) is not in this checkout: fetch the history`
  }
}

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

/** Migrates a new schema as the releases before functions/ did, to version 9. */
async function migrateAsBefore(schema: string): Promise<void> {
  const files = git('ls-tree', '--name-only', BEFORE_FUNCTIONS, OLD_MIGRATIONS)
    .split('\n')
    .filter((path) => path.endsWith('.sql'))
    .map((path) => path.slice(OLD_MIGRATIONS.length))
    .sort()
  const statements = [
    `CREATE SCHEMA "${schema}"`,
    `CREATE TABLE "${schema}".migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  ]
  for (const file of files) {
    const text = git('show', `${BEFORE_FUNCTIONS}:${OLD_MIGRATIONS}${file}`)
    statements.push(
      text.replaceAll(':"schema"', `"${schema}"`).replaceAll(":'schema'", `'${schema}'`),
      `INSERT INTO "${schema}".migrations (version, name) VALUES (${Number(file.slice(0, 4))}, '${file.slice(0, -4)}')`,
    )
  }
  await adminQuery(statements.join(';\n'))
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
        ['claim(text[],integer,bigint,text,bigint,boolean,text[])'],
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
    skipUnlessAvailable(historyMissingReason()),
    async (t) => {
      const old = tempSchema(t)
      await migrateAsBefore(old.schema)
      const [version] = await adminQuery<{ version: number }>(
        `SELECT max(version) AS version FROM "${old.schema}".migrations`,
      )
      assert.equal(version!.version, migrations.at(-1)!.version, 'the fixture is at the latest version')
      // Jobs written by the old functions: one ready, one leased, one with a unique key.
      await adminQuery(
        `SELECT "${old.schema}".enqueue('old-ready', '{"n": 1}');
           SELECT "${old.schema}".enqueue('old-leased', '{"n": 2}', queue => 'busy');
           SELECT "${old.schema}".enqueue('old-unique', '{"n": 3}', unique_key => 'k');
           SELECT * FROM "${old.schema}".claim(ARRAY['busy'], 1, ${LEASE_MS}, 'old-worker', NULL)`,
      )
      const before = await adminQuery(`SELECT * FROM "${old.schema}".jobs ORDER BY id`)
      assert.equal(before.length, 3)

      const store = await old.open()
      assert.deepEqual(
        await adminQuery(`SELECT * FROM "${old.schema}".jobs ORDER BY id`),
        before,
        'jobs kept',
      )

      const fresh = tempSchema(t)
      await fresh.open()
      assert.deepEqual(await functionSignatures(old.schema), await functionSignatures(fresh.schema))
      assert.deepEqual(await tableLayout(old.schema), await tableLayout(fresh.schema))

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
