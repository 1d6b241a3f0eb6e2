/**
 * A TypeScript handler module run by the built `ferry` (plain Node, no loader given): Ferry
 * registers tsx from the module's own project, as a user's project with tsx installed would have.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { test } from 'node:test'

import { createClient } from '../../src/index.js'
import { tempDatabase } from '../helpers/sqlite-harness.js'

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
    [BUILT_CLI, '--store', db.url, 'work', '--handlers', 'tests/fixtures/handlers/typed.ts', '--limit', '1'],
    { cwd: ROOT, env, timeout: 30_000 },
  )
  assert.match(stderr, /stopped \(job-limit\): 1 completed/)
  const job = await store.getJob(id)
  assert.equal(job?.state, 'completed')
  assert.deepEqual(job?.result, { greeting: 'hello Ada' })
})
