/** `ferry --version` prints the version of the package it comes from. */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { REPO_ROOT, runCli } from '../support/processes.js'
import { tempDatabase } from '../support/sqlite-harness.js'

test('ferry --version and -V print the package version and exit 0', async (t) => {
  const db = tempDatabase(t)
  const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
  const results = await Promise.all([runCli(db.url, ['--version']), runCli(db.url, ['-V'])])
  for (const result of results) assert.deepEqual(result, { code: 0, stdout: `${version}\n`, stderr: '' })
})
