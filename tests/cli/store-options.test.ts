/**
 * A misspelt store URL parameter stops the `ferry` command with a usage error that names it,
 * before the store is opened: `enqueue` would otherwise have created the database and written the
 * job with the defaults the typo meant to change.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'

import { runCli } from '../support/processes.js'
import { tempDatabase } from '../support/sqlite-harness.js'

test('a store URL with a misspelt parameter is a usage error (exit 2), and no database is created', async (t) => {
  const { path, url } = tempDatabase(t)
  const { code, stdout, stderr } = await runCli(`${url}?durabilty=normal`, ['enqueue', 'send-email', '{}'])
  assert.equal(code, 2, stderr)
  assert.equal(stdout, '')
  assert.equal(
    stderr,
    'ferry: store.durabilty: unknown option, did you mean durability? (known options: durability, fileMode) [invalid_option]\n',
  )
  assert.equal(existsSync(path), false)
})
