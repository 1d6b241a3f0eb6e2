// Writes tests/fixtures/postgres/schema-version-9.sql: a schema that the last release whose
// migrations defined the functions (commit 4260f7c, schema version 9) migrated and wrote three jobs
// into, as pg_dump gives it back, with the schema's name replaced by __schema__. The migration test
// restores it and migrates it with today's code, so that CI needs no git history.
//
// Usage: node scripts/postgres-fixture.mjs [CHECKOUT]
// CHECKOUT is a built checkout of that commit; without it, one is made (a git worktree in the temp
// directory, node_modules linked, `npm run build`) and removed afterwards. Needs the history, the
// PostgreSQL server of FERRY_TEST_POSTGRES_URL (default: the local `test` database) and a pg_dump of
// the server's major version.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import pg from 'pg'

const COMMIT = '4260f7ced96180c7611ce1d701005f6bebc3456f'
const PLACEHOLDER = '__schema__'
const POSTGRES_URL = process.env.FERRY_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const root = fileURLToPath(new URL('..', import.meta.url))
const output = join(root, 'tests/fixtures/postgres/schema-version-9.sql')

const run = (command, args, cwd = root) => execFileSync(command, args, { cwd, encoding: 'utf8' })

let checkout = process.argv[2]
const madeHere = checkout === undefined
if (madeHere) {
  checkout = join(mkdtempSync(join(tmpdir(), 'ferry-v9-')), 'tree')
  run('git', ['worktree', 'add', '--detach', checkout, COMMIT])
  symlinkSync(join(root, 'node_modules'), join(checkout, 'node_modules'))
  run('npm', ['run', 'build'], checkout)
} else if (run('git', ['rev-parse', 'HEAD'], checkout).trim() !== COMMIT) {
  throw new Error(`${checkout} is not a checkout of ${COMMIT}`)
}

const schema = `ferry_fixture_${randomBytes(6).toString('hex')}`
const admin = new pg.Client({ connectionString: POSTGRES_URL })
await admin.connect()
try {
  const server = Number((await admin.query('SHOW server_version_num')).rows[0].server_version_num)
  const dumpVersion = /\d+\.\d+/.exec(run('pg_dump', ['--version']))[0]
  if (Number(dumpVersion.split('.')[0]) !== Math.floor(server / 10000)) {
    throw new Error(`pg_dump ${dumpVersion} is not of the server's major version (${server})`)
  }

  // The old release's own code migrates the schema and writes its jobs: one ready, one leased,
  // one with a unique key.
  const { PostgresStore } = await import(pathToFileURL(join(checkout, 'dist/postgres.js')).href)
  const store = await PostgresStore.open({ connectionString: POSTGRES_URL, schema })
  try {
    const job = { queue: 'default', priority: 0, runAt: null, delayMs: 0, maxAttempts: 25, timeoutMs: null }
    await store.enqueue({
      jobs: [
        { ...job, name: 'old-ready', payload: '{"n":1}', uniqueKey: null },
        { ...job, name: 'old-leased', payload: '{"n":2}', queue: 'busy', uniqueKey: null },
        { ...job, name: 'old-unique', payload: '{"n":3}', uniqueKey: 'k' },
      ],
    })
    const leased = await store.claim({ queues: ['busy'], limit: 1, leaseMs: 60_000, workerId: 'old-worker' })
    if (leased.length !== 1) throw new Error('the old store did not lease old-leased')
  } finally {
    await store.close()
  }

  // Rows as INSERTs (one query can run them; COPY FROM stdin needs psql); no owners or grants.
  const dump = run('pg_dump', [
    `--dbname=${POSTGRES_URL}`,
    `--schema=${schema}`,
    '--no-owner',
    '--no-privileges',
    '--inserts',
  ])
  // Left out: the SET lines (psql's session for the restore, one of them an empty search_path) but
  // check_function_bodies = false, without which deliver(), declared before the waiters table whose
  // row type it uses, cannot be created;
  // psql's \restrict and \unrestrict (with a random key each time), pg_dump's banner and its
  // comments naming each object (they name owners), blank runs.
  const body = dump
    .split('\n')
    .filter(
      (line) =>
        !/^(SET (?!check_function_bodies = false;)|SELECT pg_catalog\.set_config\('search_path'|--|\\(un)?restrict )/.test(
          line,
        ),
    )
    .join('\n')
    .replaceAll(schema, PLACEHOLDER)
    .replace(/\n{3,}/g, '\n\n')
    .trim()
  if (body.includes(schema)) throw new Error('the schema name is still in the dump')
  const header = [
    `-- A PostgreSQL schema as the last release whose migrations defined the functions left it:`,
    `-- migrated to schema version 9 by PostgresStore.open of commit ${COMMIT.slice(0, 7)}`,
    `-- (${COMMIT}), then three jobs written by that store: old-ready;`,
    `-- old-leased, leased by old-worker; old-unique, unique key k. Dumped by pg_dump ${dumpVersion}`,
    `-- with its rows (--schema-only would leave out the migrations table's and the jobs), as`,
    `-- INSERTs, without owners, grants, pg_dump's comments and SET lines (but check_function_bodies,`,
    `-- which the restore needs); ${PLACEHOLDER} stands for the schema's name.`,
    `-- Read by tests/store/postgres-migrations.test.ts. Do not edit; regenerate with:`,
    `--   node scripts/postgres-fixture.mjs`,
  ]
  mkdirSync(join(output, '..'), { recursive: true })
  writeFileSync(output, `${header.join('\n')}\n\n${body}\n`)
  console.log(`wrote ${output.slice(root.length)}`)
} finally {
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
  if (madeHere) {
    run('git', ['worktree', 'remove', '--force', checkout])
    rmSync(join(checkout, '..'), { recursive: true, force: true })
  }
}
