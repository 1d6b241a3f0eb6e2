/**
 * `ferry enqueue --stdin` against input that tries its limits: a line far longer than any job,
 * reported while it is still arriving and read past without being kept; lines at the payload
 * limit, which must all be stored across batches cut by bytes; a payload nested thousands deep,
 * which fails alone.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { test } from 'node:test'

import { MAX_LINE_BYTES } from '../../src/cli/commands/enqueue.js'
import { DEFAULT_MAX_PAYLOAD_BYTES } from '../../src/core/job.js'
import { runCli, spawnCli } from '../support/processes.js'
import { tempDatabase } from '../support/sqlite-harness.js'
import { allJobs } from '../support/store-harness.js'

/** Resolves once `text()` matches `pattern`, checking at every chunk of `stream`; rejects after `timeoutMs`. */
function untilOutput(
  stream: NodeJS.ReadableStream,
  text: () => string,
  pattern: RegExp,
  timeoutMs: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (!pattern.test(text())) return
      clearTimeout(timer)
      stream.off('data', check)
      resolve()
    }
    const timer = setTimeout(() => {
      stream.off('data', check)
      reject(new Error(`no output matching ${pattern} within ${timeoutMs} ms; got:\n${text()}`))
    }, timeoutMs)
    stream.on('data', check)
    check()
  })
}

/** Writes `data` to the child's stdin, waiting for the pipe to drain when it is full. */
async function feed(stdin: NodeJS.WritableStream, data: string): Promise<void> {
  if (!stdin.write(data)) await once(stdin, 'drain')
}

test('reports a line longer than any job while it is still arriving, reads past the rest of it and stores the lines around it', async (t) => {
  const db = tempDatabase(t)
  const child = spawnCli(db.url, ['enqueue', '--stdin'])
  t.after(() => child.kill('SIGKILL'))
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const closed = once(child, 'close')

  await feed(child.stdin, '{"name":"before"}\n')
  // Line 2 passes the limit by one byte, and has not ended: it must be reported now, not at its newline.
  const opening = '{"name":"huge","payload":"'
  await feed(child.stdin, opening + 'x'.repeat(MAX_LINE_BYTES + 1 - opening.length))
  await untilOutput(child.stderr, () => stderr, /^line 2: longer than \d+ bytes/m, 20_000)
  // The rest of it, 8 MiB more, is read past.
  const mebibyte = 'x'.repeat(1024 * 1024)
  for (let i = 0; i < 8; i++) await feed(child.stdin, mebibyte)
  await feed(child.stdin, '"}\n')
  await feed(child.stdin, `${JSON.stringify({ name: 'after', payload: { text: 'é🚢'.repeat(1000) } })}\n`)
  // A job at the payload limit still fits in a line: its JSON string is the limit less its quotes.
  const atLimit = 'y'.repeat(DEFAULT_MAX_PAYLOAD_BYTES - 2)
  child.stdin.end(JSON.stringify({ name: 'at-limit', payload: atLimit, queue: 'big' }))
  const [code] = (await closed) as [number]

  assert.equal(code, 1, stderr)
  assert.equal(
    stderr,
    `line 2: longer than ${MAX_LINE_BYTES} bytes, more than any job can be (a payload may be at most ` +
      `${DEFAULT_MAX_PAYLOAD_BYTES} bytes of JSON); the rest of the line is skipped\n`,
  )
  const printed = stdout.trimEnd().split('\n')
  const store = await db.open()
  const jobs = await allJobs(store)
  assert.deepEqual(
    jobs.map((job) => job.id),
    printed,
  )
  assert.deepEqual(
    jobs.map((job) => [job.name, job.queue]),
    [
      ['before', 'default'],
      ['after', 'default'],
      ['at-limit', 'big'],
    ],
  )
  assert.deepEqual(jobs[1]!.payload, { text: 'é🚢'.repeat(1000) })
  assert.equal(jobs[2]!.payload, atLimit)
})

test('stores every line of an input whose lines are all near the payload limit, ids in input order', async (t) => {
  const db = tempDatabase(t)
  const count = 12
  const lines = Array.from({ length: count }, (_, seq) =>
    JSON.stringify({ name: 'big', payload: { seq, blob: 'z'.repeat(DEFAULT_MAX_PAYLOAD_BYTES - 100) } }),
  )
  const { code, stdout, stderr } = await runCli(db.url, ['enqueue', '--stdin'], `${lines.join('\n')}\n`)

  assert.equal(code, 0, stderr)
  assert.equal(stderr, '')
  const printed = stdout.trimEnd().split('\n')
  const store = await db.open()
  const jobs = await allJobs(store)
  assert.deepEqual(
    jobs.map((job) => job.id),
    printed,
  )
  assert.deepEqual(
    jobs.map((job) => (job.payload as { seq: number }).seq),
    lines.map((_, seq) => seq),
  )
})

test('reports a payload nested 5,000 deep as a bad line and stores the lines around it', async (t) => {
  const db = tempDatabase(t)
  const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`
  const input = ['{"name":"before"}', `{"name":"deep","payload":${deep}}`, '{"name":"after"}'].join('\n')
  const { code, stdout, stderr } = await runCli(db.url, ['enqueue', '--stdin'], input)

  assert.equal(code, 1, stderr)
  assert.equal(
    stderr,
    'line 2: payload: is nested more than 1000 levels deep (arrays and objects within one another)\n',
  )
  const store = await db.open()
  const jobs = await allJobs(store)
  assert.deepEqual(
    jobs.map((job) => [job.id, job.name]),
    stdout
      .trimEnd()
      .split('\n')
      .map((id, i) => [id, ['before', 'after'][i]]),
  )
})
