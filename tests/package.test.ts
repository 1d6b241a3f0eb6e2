/**
 * The package as a user installs it: the files `npm pack` ships, and what loads from CommonJS.
 * Both read the build in dist/ (npm test builds first).
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'

import { REPO_ROOT } from './support/processes.js'

const run = promisify(execFile)

/** The paths `npm pack` would put in the package, from the repository root (no scripts run). */
async function packedFiles(): Promise<Set<string>> {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO_ROOT })
  const [pack] = JSON.parse(stdout) as { files: { path: string }[] }[]
  return new Set(pack!.files.map((file) => file.path))
}

test('ships the LICENSE, the build and every source file that its source maps name, no tests', async () => {
  const files = await packedFiles()
  assert.ok(files.has('LICENSE'), 'package.json says MIT: the LICENSE must ship')
  const maps = [...files].filter((file) => file.endsWith('.map'))
  assert.ok(maps.length > 0, 'the package holds no source maps: is dist/ built?')
  // A stack trace through a map (tsx, --enable-source-maps) names these files: they must exist.
  for (const map of maps) {
    const { sources } = JSON.parse(readFileSync(join(REPO_ROOT, map), 'utf8')) as { sources: string[] }
    for (const source of sources) {
      const path = relative(REPO_ROOT, resolve(REPO_ROOT, dirname(map), source))
        .split(sep)
        .join('/')
      assert.ok(files.has(path), `${map} points to ${path}, which the package does not ship`)
    }
  }
  assert.deepEqual(
    [...files].filter((file) => file.endsWith('.test.ts')),
    [],
  )
})

test('loads every entry point with require() from CommonJS, without a flag or a warning', async () => {
  // The README promises this for Node 20.19+: it breaks if a module of Ferry's gains a top-level
  // await (ERR_REQUIRE_ASYNC_MODULE).
  const entries = ['ferry', 'ferry/sqlite', 'ferry/postgres', 'ferry/redis']
  const script = 'for (const entry of process.argv.slice(1)) console.log(entry, typeof require(entry))'
  const { stdout, stderr } = await run(
    process.execPath,
    ['--input-type=commonjs', '-e', script, ...entries],
    {
      cwd: REPO_ROOT,
    },
  )
  assert.deepEqual(
    stdout.trimEnd().split('\n'),
    entries.map((entry) => `${entry} object`),
  )
  assert.equal(stderr, '')
})
