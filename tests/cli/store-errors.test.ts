/**
 * What `ferry` says about the store itself: a SQLite path that does not exist (created only by the
 * commands that write jobs), a Redis server that can lose acknowledged jobs (one warning line, only
 * where jobs are written), and a server that cannot be reached (its host, port and the OS error).
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'

import { POSTGRES_URL } from '../support/postgres-harness.js'
import { ownServerOptions, startOwnRedisServer, uniqueNamespace } from '../support/redis-harness.js'
import { defer } from '../support/cleanup.js'
import { REPO_ROOT, runCli } from '../support/processes.js'
import { tempDatabase } from '../support/sqlite-harness.js'

const HANDLERS = join(REPO_ROOT, 'tests', 'support', 'handlers', 'plain.mjs')

test('stats, workers, jobs, retry, cancel, purge and stop-workers refuse a SQLite path that does not exist, creating nothing', async (t) => {
  const db = tempDatabase(t)
  const commands = [
    ['stats'],
    ['workers'],
    ['jobs'],
    ['jobs', 'show', '1'],
    ['retry', '1'],
    ['retry', '--all-dead'],
    ['cancel', '1'],
    ['purge', '--state', 'dead'],
    ['stop-workers'],
  ]
  const results = await Promise.all(commands.map((args) => runCli(db.url, args)))
  for (const [i, { code, stdout, stderr }] of results.entries()) {
    const label = commands[i]!.join(' ')
    assert.equal(code, 2, `${label}: ${stderr}`)
    assert.equal(stdout, '', label)
    assert.equal(
      stderr,
      `ferry: no SQLite database at ${db.path}: the file does not exist (check the path; ` +
        '`ferry migrate` creates a new database) [store_unavailable]\n',
      label,
    )
  }
  assert.equal(existsSync(db.path), false, 'no database file was created')
})

test('enqueue and work create a missing SQLite database', async (t) => {
  const forEnqueue = tempDatabase(t)
  const forWork = tempDatabase(t)
  const [enqueued, worked] = await Promise.all([
    runCli(forEnqueue.url, ['enqueue', 'plain-mjs', '{}']),
    runCli(forWork.url, ['work', '--handlers', HANDLERS, '--time-limit', '10ms']),
  ])
  assert.equal(enqueued.code, 0, enqueued.stderr)
  assert.match(enqueued.stdout, /^1\n$/)
  assert.equal(worked.code, 0, worked.stderr)
  assert.match(worked.stderr, /stopped \(time-limit\)/)
  assert.ok(existsSync(forEnqueue.path) && existsSync(forWork.path))
})

/**
 * The warning is about the server's setting, so the test starts a server of its own without an
 * append-only file: the shared test server may run with one.
 */
test(
  'Redis without AOF: enqueue and work warn in one line of their own, the other commands not at all',
  ownServerOptions(),
  async (t) => {
    const server = await startOwnRedisServer({ appendonly: false })
    defer(t, () => server.close())
    const url = new URL(server.url)
    url.searchParams.set('namespace', uniqueNamespace('aof-warning'))
    const store = url.toString()

    const warning =
      'ferry: warning: Redis runs without an append-only file (appendonly no): jobs acknowledged since ' +
      'its last snapshot are lost if the server crashes or restarts. Set appendonly yes and appendfsync ' +
      'always (docs/backends.md)'
    const enqueued = await runCli(store, ['enqueue', 'plain-mjs', '{}'])
    assert.equal(enqueued.code, 0, enqueued.stderr)
    assert.equal(enqueued.stderr, `${warning}\n`)
    const worked = await runCli(store, ['work', '--handlers', HANDLERS, '--limit', '1'])
    assert.equal(worked.code, 0, worked.stderr)
    assert.equal(worked.stderr.split('\n')[0], warning)
    assert.equal(worked.stderr.split(warning).length, 2, `one warning line:\n${worked.stderr}`)
    assert.doesNotMatch(worked.stderr, /trace-warnings|Warning:/)

    const quiet = await Promise.all(
      [['stats'], ['jobs'], ['retry', '--all-dead'], ['purge', '--state', 'dead'], ['stop-workers']].map(
        (args) => runCli(store, args),
      ),
    )
    for (const { code, stderr } of quiet) {
      assert.equal(code, 0, stderr)
      assert.equal(stderr, '')
    }
  },
)

/** A port nothing listens on: taken from the OS, then given back. */
async function unusedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * A port where something accepts each connection and hangs up at once, as a proxy with no backend
 * does. What the client sent is read first, so the hang-up is a clean close, never a reset.
 */
async function hangingUpPort(t: TestContext): Promise<number> {
  const server: Server = createServer((socket) => {
    socket.resume()
    socket.end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  defer(t, () => new Promise((resolve) => server.close(resolve)))
  return (server.address() as { port: number }).port
}

test('a connection refused or hung up names the host, the port and the OS error', async (t) => {
  const refused = await unusedPort()
  const hangsUp = await hangingUpPort(t)
  const postgresAt = (port: number): string => {
    const url = new URL(POSTGRES_URL)
    url.hostname = '127.0.0.1'
    url.port = String(port)
    return url.toString()
  }
  const cases: [string, string][] = [
    [
      `redis://127.0.0.1:${refused}`,
      `ferry: cannot connect to Redis at 127.0.0.1:${refused}: ECONNREFUSED (connection refused: nothing ` +
        'listens on that port) [store_unavailable]\n',
    ],
    [
      `redis://localhost:${refused}`,
      `ferry: cannot connect to Redis at localhost:${refused}: ECONNREFUSED (connection refused: nothing ` +
        'listens on that port) [store_unavailable]\n',
    ],
    [
      `redis://127.0.0.1:${hangsUp}`,
      `ferry: cannot connect to Redis at 127.0.0.1:${hangsUp}: the connection was closed before the server ` +
        'answered: is a Redis server listening there? [store_unavailable]\n',
    ],
    [
      postgresAt(refused),
      `ferry: cannot connect to PostgreSQL at 127.0.0.1:${refused}: ECONNREFUSED (connection refused: ` +
        'nothing listens on that port) [store_unavailable]\n',
    ],
    [
      postgresAt(hangsUp),
      `ferry: PostgreSQL at 127.0.0.1:${hangsUp} closed the connection (Connection terminated unexpectedly): ` +
        'the server stopped or restarted, or what listens there is not PostgreSQL [store_unavailable]\n',
    ],
  ]
  const results = await Promise.all(cases.map(([url]) => runCli(url, ['stats'])))
  for (const [i, { code, stdout, stderr }] of results.entries()) {
    assert.equal(code, 2, stderr)
    assert.equal(stdout, '')
    assert.equal(stderr, cases[i]![1])
  }
})
