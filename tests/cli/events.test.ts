/**
 * `ferry events` (job events as they happen, one per line) and `ferry enqueue --wait` (the job's
 * result, exit 1 when it ends dead), as child processes beside a worker in the test.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { test, type TestContext } from 'node:test'

import type { SqliteStore } from '../../src/sqlite.js'
import { createClient } from '../../src/index.js'
import { within } from '../support/async.js'
import { defer } from '../support/cleanup.js'
import { runCli, spawnCli } from '../support/processes.js'
import { tempDatabase } from '../support/sqlite-harness.js'
import { startWorker } from '../support/workers.js'

const handlers = {
  double: (payload: { n: number }) => ({ doubled: payload.n * 2 }),
  fail: () => {
    throw new Error('no luck')
  },
}

async function workOn(t: TestContext, store: SqliteStore): Promise<void> {
  await startWorker(t, { store, handlers, concurrency: 1, queues: ['default', 'math', 'other'] })
}

/** Starts `ferry events`, waits for it to be subscribed, and gathers its stdout lines. */
async function watchEvents(
  t: TestContext,
  url: string,
  args: string[],
): Promise<{ lines: string[]; stop: () => Promise<number | null> }> {
  const child = spawnCli(url, ['events', ...args])
  const lines: string[] = []
  let partial = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    partial += chunk
    const parts = partial.split('\n')
    partial = parts.pop()!
    lines.push(...parts)
  })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = once(child, 'exit')
  defer(t, () => {
    if (child.exitCode === null) child.kill('SIGKILL')
  })
  // Subscribed once it says so.
  await within(
    20_000,
    'ferry events to start',
    (async () => {
      while (!/watching job events/.test(stderr) && child.exitCode === null) {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    })(),
  )
  return {
    lines,
    stop: async () => {
      child.kill('SIGINT')
      const [code] = (await exited) as [number | null]
      return code
    },
  }
}

test('ferry events prints each event of a job as a line of text, and a JSON document per line with --json, until Ctrl-C', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  const text = await watchEvents(t, db.url, [])
  const json = await watchEvents(t, db.url, ['--json', '--queue', 'math'])
  const client = createClient({ store })
  await client.enqueue('double', { n: 1 }, { queue: 'other' })
  const { id } = await client.enqueue('double', { n: 21 }, { queue: 'math' })
  await workOn(t, store)
  await within(
    10_000,
    'the events of the math job',
    (async () => {
      while (json.lines.length < 3) await new Promise((resolve) => setTimeout(resolve, 50))
    })(),
  )
  const events = json.lines.map((line) => JSON.parse(line) as Record<string, unknown>)
  assert.deepEqual(
    events.map((event) => [event.type, event.id, event.queue, event.name]),
    [
      ['enqueued', id, 'math', 'double'],
      ['started', id, 'math', 'double'],
      ['completed', id, 'math', 'double'],
    ],
  )
  assert.deepEqual(events[2]!.result, { doubled: 42 })
  assert.match(String(events[0]!.at), /^\d{4}-\d\d-\d\dT/)
  assert.equal(await json.stop(), 0)
  await within(
    10_000,
    'the text lines',
    (async () => {
      while (text.lines.filter((line) => line.includes(`#${id}`)).length < 3)
        await new Promise((resolve) => setTimeout(resolve, 50))
    })(),
  )
  const ours = text.lines.filter((line) => line.includes(`#${id}`))
  assert.match(ours[0]!, /^\S+Z enqueued +math double #\d+$/)
  assert.match(ours[2]!, /completed +math double #\d+ \{"doubled":42\}$/)
  assert.equal(await text.stop(), 0)
})

test('ferry enqueue --wait prints the id, then the result once a worker completes the job', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  await workOn(t, store)
  const { code, stdout, stderr } = await runCli(db.url, [
    'enqueue',
    'double',
    '{"n":4}',
    '--wait',
    '--timeout',
    '20s',
  ])
  assert.equal(code, 0, stderr)
  const [id, result] = stdout.trim().split('\n')
  assert.match(id!, /^\d+$/)
  assert.deepEqual(JSON.parse(result!), { doubled: 8 })
})

test('ferry enqueue --wait exits 1 with the job error when the job ends dead', async (t) => {
  const db = tempDatabase(t)
  const store = await db.open()
  await workOn(t, store)
  const { code, stdout, stderr } = await runCli(db.url, [
    'enqueue',
    'fail',
    '--max-attempts',
    '1',
    '--wait',
    '--timeout',
    '20s',
  ])
  assert.equal(code, 1)
  assert.match(stdout.trim(), /^\d+$/, 'only the id on stdout')
  assert.match(stderr, /no luck \[job_dead\]/)
})

test('ferry enqueue --wait --timeout gives up with wait_timeout when nobody runs the job, exit 2', async (t) => {
  const db = tempDatabase(t)
  const { code, stderr } = await runCli(db.url, [
    'enqueue',
    'double',
    '{"n":1}',
    '--wait',
    '--timeout',
    '300ms',
  ])
  assert.equal(code, 2)
  assert.match(stderr, /\[wait_timeout\]/)
})
