/**
 * A TypeScript handler module run by the built `ferry` (plain Node, no loader given): Ferry
 * registers tsx from the module's own project, as a user's project with tsx installed would have,
 * and says to install it where there is none.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { test } from 'node:test'

import { createClient } from '../../src/index.js'
import { tempDatabase } from '../support/sqlite-harness.js'
import { getJob } from '../support/store-calls.js'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const BUILT_CLI = join(ROOT, 'dist', 'cli', 'main.js')

test('the built ferry work runs a .ts handler module through the project’s own tsx', async (t) => {
  assert.ok(
    existsSync(BUILT_CLI),
    'this test runs the built command: run `npm run build` first (npm test does)',
  )
  const db = tempDatabase(t)
  const store = await db.open()
  const { id } = await createClient({ store }).enqueue('greet', { name: 'Ada' })
  const env: NodeJS.ProcessEnv = { ...process.env }
  delete env.NODE_OPTIONS
  const { stderr } = await run(
    process.execPath,
    [BUILT_CLI, '--store', db.url, 'work', '--handlers', 'tests/support/handlers/typed.ts', '--limit', '1'],
    { cwd: ROOT, env, timeout: 30_000 },
  )
  assert.match(stderr, /stopped \(job-limit\): 1 completed/)
  const job = await getJob(store, id)
  assert.equal(job?.state, 'completed')
  assert.deepEqual(job?.result, { greeting: 'hello Ada' })
})

test('the built ferry work says to install tsx when a .ts handler module has none to load it', async (t) => {
  assert.ok(
    existsSync(BUILT_CLI),
    'this test runs the built command: run `npm run build` first (npm test does)',
  )
  const db = tempDatabase(t)
  // Outside this repository, so that no tsx can be found from the module's directory.
  const dir = mkdtempSync(join(tmpdir(), 'ferry-no-tsx-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const module = join(dir, 'jobs.ts')
  writeFileSync(module, 'export default { greet: (payload: unknown): unknown => payload }\n')
  const env: NodeJS.ProcessEnv = { ...process.env }
  delete env.NODE_OPTIONS
  const exit = await run(process.execPath, [BUILT_CLI, '--store', db.url, 'work', '--handlers', module], {
    cwd: dir,
    env,
    timeout: 30_000,
  }).then(
    () => assert.fail('ferry work started without a way to load TypeScript'),
    (error: { code: number; stderr: string }) => error,
  )
  assert.equal(exit.code, 2)
  assert.equal(
    exit.stderr,
    `ferry: cannot load the handler module ${module}: it is TypeScript, which Ferry loads with tsx, and tsx is ` +
      'not installed in its project: install it there (npm install --save-dev tsx), run Ferry under a ' +
      'TypeScript loader (node --import tsx), or compile the module to JavaScript [invalid_option]\n',
  )
})
