// Runs every *.test.ts under tests/ and src/ with node:test through tsx.
// Node 20's test runner takes no glob patterns, so this script finds the files: sorted, with the
// slow crash tests (tests/crash/) last. Arguments restrict the run to files whose path contains
// any of them: `npm test -- validate client` runs src/core/validate.test.ts and tests/client.test.ts.
// Output: scripts/test-reporter.mjs (one line per test, failures in full at the end, then the
// counts). FERRY_TEST_IOREDIS=5 runs every process of the run on ioredis 5 instead of 6.
import { spawn } from 'node:child_process'
import console from 'node:console'
import { readdirSync } from 'node:fs'
import { join, sep } from 'node:path'
import process from 'node:process'
import { fileURLToPath, pathToFileURL, URL } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const ROOTS = ['tests', 'src']
const SKIP_DIRS = new Set(['node_modules', 'dist'])

/** Every *.test.ts below dir, as paths relative to the repository root with '/' separators. */
function findTests(dir) {
  let entries
  try {
    entries = readdirSync(join(root, dir), { withFileTypes: true })
  } catch (error) {
    if (error.code === 'ENOENT') return []
    throw error
  }
  const files = []
  for (const entry of entries) {
    const path = `${dir}/${entry.name}`
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) files.push(...findTests(path))
    } else if (entry.isFile() && entry.name.endsWith('.test.ts')) {
      files.push(path)
    }
  }
  return files
}

const isCrash = (file) => file.startsWith('tests/crash/')
const byPath = (a, b) => (a < b ? -1 : a > b ? 1 : 0)
const all = ROOTS.flatMap(findTests).sort(byPath)
const ordered = [...all.filter((file) => !isCrash(file)), ...all.filter(isCrash)]

// A filter may be written as a path from the repository root, with or without './'.
const filters = process.argv.slice(2).map((arg) => arg.split(sep).join('/').replace(/^\.\//, ''))
const files = filters.length === 0 ? ordered : ordered.filter((file) => filters.some((f) => file.includes(f)))

/**
 * The environment that puts the run on the ioredis major asked for: 6 (the `ioredis` dev
 * dependency, the default) or 5 (the `ioredis5` alias, through tests/support/use-ioredis5.mjs).
 * Through NODE_OPTIONS, so that the `ferry` processes the tests start use it too.
 */
function ioredisEnv(major = '6') {
  if (major === '6') return {}
  if (major !== '5') {
    console.error(`run-tests: FERRY_TEST_IOREDIS must be 5 or 6 (got ${JSON.stringify(major)})`)
    process.exit(1)
  }
  const hook = pathToFileURL(join(root, 'tests/support/use-ioredis5.mjs')).href
  return { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${hook}`.trim() }
}

if (files.length === 0) {
  console.error(
    filters.length === 0
      ? 'run-tests: no *.test.ts files found under tests/ or src/'
      : `run-tests: no test file matches ${filters.map((f) => JSON.stringify(f)).join(', ')}`,
  )
  process.exit(1)
}

const reporter = pathToFileURL(join(root, 'scripts/test-reporter.mjs')).href
const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=2',
    `--test-reporter=${reporter}`,
    '--test-reporter-destination=stdout',
    ...files,
  ],
  { cwd: root, stdio: 'inherit', env: { ...process.env, ...ioredisEnv(process.env.FERRY_TEST_IOREDIS) } },
)
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => child.kill(signal))
}
child.on('exit', (code, signal) => {
  if (signal !== null) {
    console.error(`run-tests: the test runner was killed by ${signal}`)
    process.exit(1)
  }
  process.exit(code ?? 1)
})
