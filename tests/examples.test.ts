/**
 * Runs every examples/*.ts as a user would (a child process importing 'ferry' from the build),
 * so the README cannot rot: each example must exit 0 and print what it promises, and the README
 * must show each example's code exactly as it is in the file.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { test } from 'node:test'

import { SqliteStore } from '../src/sqlite.js'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const EXAMPLES = join(ROOT, 'examples')

/** What each example must print, line by line, and how many jobs it leaves in the store. */
const EXPECTED: Record<string, { lines: RegExp[]; jobCount: number }> = {
  'hello-world.ts': {
    lines: [
      /^sending a welcome e-mail to ada@example\.com$/,
      /^job \d+: completed after 1 attempt\(s\), result \{"sent":true\}$/,
    ],
    jobCount: 1,
  },
  'admin.ts': {
    lines: [
      /^mail: 0 ready, 0 active, 1 completed, 1 dead$/,
      /^job \d+: dead \(no mail server for bob@example\.invalid\)$/,
      /^job \d+: completed$/,
      /^1 dead job\(s\) moved back to ready$/,
    ],
    jobCount: 2,
  },
  'metrics.ts': {
    lines: [
      /^job \d+: completed$/,
      /^job \d+: completed$/,
      /^job \d+: completed$/,
      /^ferry_jobs_completed_total\{queue="images",name="resize-image"\} 3$/,
      /^ferry_jobs\{queue="images",state="completed"\} 3$/,
    ],
    jobCount: 3,
  },
}

/** Where each example is shown in full. */
const SHOWN_IN: Record<string, string> = {
  'hello-world.ts': 'README.md',
  'admin.ts': 'docs/admin.md',
  'metrics.ts': 'docs/metrics.md',
}

const examples = readdirSync(EXAMPLES)
  .filter((file) => file.endsWith('.ts'))
  .sort()

test('every example has its expected output listed here', () => {
  assert.ok(examples.length > 0, 'examples/ holds no example')
  assert.deepEqual(examples, Object.keys(EXPECTED).sort())
})

for (const example of examples) {
  test(`examples/${example} runs, prints what it promises and stores its jobs`, async (t) => {
    assert.ok(
      existsSync(join(ROOT, 'dist', 'index.js')),
      "the examples import 'ferry' from dist/: run `npm run build` first (npm test does)",
    )
    const dir = mkdtempSync(join(tmpdir(), 'ferry-example-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const dbPath = join(dir, 'ferry.db')
    const { stdout } = await run(process.execPath, ['--import', 'tsx', join(EXAMPLES, example)], {
      cwd: ROOT,
      env: { ...process.env, FERRY_STORE: `sqlite://${dbPath}` },
      timeout: 60_000,
    })
    const expected = EXPECTED[example]!
    const lines = stdout.trimEnd().split('\n')
    assert.equal(lines.length, expected.lines.length, `output:\n${stdout}`)
    expected.lines.forEach((pattern, i) => assert.match(lines[i]!, pattern))

    // The jobs went to FERRY_STORE, durably: a fresh store on that file finds them.
    const store = await SqliteStore.open({ path: dbPath })
    try {
      const page = await store.listJobs()
      assert.equal(page.jobs.length, expected.jobCount)
      const printedIds = lines.map((line) => /^job (\d+):/.exec(line)?.[1]).filter((id) => id !== undefined)
      assert.deepEqual(printedIds.sort(), page.jobs.map((job) => job.id).sort())
    } finally {
      await store.close()
    }
  })
}

test('the README and docs/ show each of their examples exactly as the file has it', () => {
  for (const [example, page] of Object.entries(SHOWN_IN)) {
    const text = readFileSync(join(ROOT, page), 'utf8')
    const code = readFileSync(join(EXAMPLES, example), 'utf8')
    const block = '```ts\n' + code + '```\n'
    assert.ok(
      text.includes(block),
      `${page} must contain examples/${example} verbatim in a \`\`\`ts block; copy the file into it`,
    )
  }
})
