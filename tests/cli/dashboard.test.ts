/**
 * `ferry dashboard` as a user runs it, from outside: it prints its address, answers GET / with
 * HTML and /healthz without auth, takes its token from --token or FERRY_DASHBOARD_TOKEN, refuses
 * a non-loopback address without one (exit 2), and stops on SIGTERM.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { createClient } from '../../src/index.js'
import { runCli, spawnFerry } from '../support/processes.js'
import { tempDatabase } from '../support/sqlite-harness.js'

const URL_LINE = /^http:\/\/127\.0\.0\.1:(\d+)\/$/m

test('ferry dashboard serves the overview on loopback, /healthz without auth, and stops on SIGTERM', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  await createClient({ store }).enqueue('send', null, { queue: 'mail' })
  const dashboard = spawnFerry(t, ['--store', db.url, 'dashboard', '--port', '0'])
  await dashboard.waitForOutput(URL_LINE)
  const base = dashboard.stdout.match(URL_LINE)![0]
  const page = await fetch(base)
  assert.equal(page.status, 200)
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
  assert.match(await page.text(), /data-queue="mail"/)
  const health = await fetch(`${base}healthz`)
  assert.equal(health.status, 200)
  dashboard.child.kill('SIGTERM')
  const exit = await dashboard.waitForExit(10_000)
  assert.equal(exit.code, 0)
})

test('ferry dashboard with FERRY_DASHBOARD_TOKEN wants it for the API and the pages, not for /healthz', async (t) => {
  const db = tempDatabase(t)
  await db.open()
  const token = 'token-from-the-environment-42'
  const dashboard = spawnFerry(t, ['--store', db.url, 'dashboard', '--port', '0', '--read-only'], {
    env: { FERRY_DASHBOARD_TOKEN: token },
  })
  await dashboard.waitForOutput(URL_LINE)
  const base = dashboard.stdout.match(URL_LINE)![0]
  assert.equal((await fetch(`${base}api/overview`)).status, 401)
  assert.equal((await fetch(`${base}`, { redirect: 'manual' })).status, 303)
  assert.equal((await fetch(`${base}healthz`)).status, 200)
  const authorized = { authorization: `Bearer ${token}` }
  assert.equal((await fetch(`${base}api/overview`, { headers: authorized })).status, 200)
  // --read-only: even the token changes nothing.
  const pause = await fetch(`${base}api/queues/mail/pause`, { method: 'POST', headers: authorized })
  assert.equal(pause.status, 403)
})

test('ferry dashboard on a non-loopback address without a token exits 2 with a clear error', async (t) => {
  const db = tempDatabase(t)
  await db.open()
  const refused = await runCli(db.url, ['dashboard', '--host', '0.0.0.0', '--port', '0'])
  assert.equal(refused.code, 2)
  assert.equal(refused.stdout, '')
  assert.match(refused.stderr, /--host: 0\.0\.0\.0 is not a loopback address: .*give it a token/)
  const short = await runCli(db.url, ['dashboard', '--host', '0.0.0.0', '--port', '0', '--token', 'short'])
  assert.equal(short.code, 2)
  assert.match(short.stderr, /--token: must be at least 16 characters/)
  const badPort = await runCli(db.url, ['dashboard', '--port', 'eighty'])
  assert.equal(badPort.code, 2)
  assert.match(badPort.stderr, /--port/)
})
