/**
 * What `ferry work` logs: JSON lines on stderr when it is not a terminal (each a pino record with
 * an `event` and the fields a log search needs), readable lines and a periodic summary when it is
 * one (through a pseudo-terminal made by util-linux's `script`), the level options, and the store
 * error and recovery records (in process, with SQLite's write lock held by another connection).
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'

import { createLogger } from '../../src/cli/logger.js'
import { formatLogLine } from '../../src/cli/pretty-log.js'
import { logWorkerEvents } from '../../src/cli/worker-log.js'
import { formatSummary } from '../../src/cli/worker-summary.js'
import { createClient, type JobSpec } from '../../src/index.js'
import type { ScriptPayload } from '../support/handlers/scripted.js'
import { waitFor, within } from '../support/async.js'
import { defer } from '../support/cleanup.js'
import { logRecords, REPO_ROOT, runCli, runFerry, spawnFerry, WORKER_STARTED } from '../support/processes.js'
import { holdWriteLock, tempStore } from '../support/sqlite-harness.js'
import { freshStore, STORES, urlOf } from '../support/stores.js'
import { createWorker, fixtureHandlers, stopWorker } from '../support/workers.js'

const SCRIPTED = fixtureHandlers('scripted.ts')

/** `ferry --store <url> work` on the scripted handlers, with `extra` options. */
function work(url: string, ...extra: string[]): string[] {
  return ['--store', url, 'work', '--handlers', SCRIPTED, ...extra]
}

function script(...steps: ScriptPayload['steps']): JobSpec {
  return { name: 'script', payload: { steps } satisfies ScriptPayload }
}

/** One job that fails once then succeeds, one that fails for good, one that succeeds: 4 attempts. */
const MIXED: JobSpec[] = [
  script({ throw: 'flaky' }, { result: 'second try' }),
  script({ permanent: 'bad address' }),
  script({ result: 'fine' }),
]

function recordsOf(records: Record<string, unknown>[], event: string): Record<string, unknown>[] {
  return records.filter((record) => record.event === event)
}

test('ferry work on a pipe logs JSON lines: its start, failed and dead jobs and its stop, and no line per completed job', async (t) => {
  const { store, url } = await tempStore(t)
  const [flaky, dead] = await createClient({ store }).enqueueMany(MIXED)
  const ferry = spawnFerry(t, work(url, '--limit', '4', '--concurrency', '2'))
  const exit = await ferry.waitForExit(20_000)
  assert.equal(exit.code, 0, exit.stderr)

  const lines = exit.stderr.trimEnd().split('\n')
  const records = logRecords(exit.stderr)
  assert.equal(records.length, lines.length, `every line is a JSON record:\n${exit.stderr}`)
  for (const record of records) {
    assert.match(String(record.level), /^(info|warn|error)$/)
    assert.ok(!Number.isNaN(Date.parse(String(record.time))), `time ${String(record.time)}`)
    assert.equal(record.pid, ferry.child.pid)
    assert.equal(typeof record.hostname, 'string')
    assert.equal(typeof record.msg, 'string')
    assert.equal(typeof record.event, 'string')
  }

  const [started] = recordsOf(records, 'worker:started')
  assert.deepEqual(
    {
      level: started?.level,
      store: started?.store,
      queues: started?.queues,
      concurrency: started?.concurrency,
      strategy: started?.strategy,
      jobNames: started?.jobNames,
    },
    {
      level: 'info',
      store: 'sqlite',
      queues: ['default'],
      concurrency: 2,
      strategy: 'inline',
      jobNames: ['ok', 'script'],
    },
  )
  assert.match(String(started?.workerId), /\S/)
  assert.match(
    String(started?.msg),
    /^worker \S+ on default \(concurrency 2, strategy inline, sqlite store\)/,
  )

  const [failed] = recordsOf(records, 'job:failed')
  assert.deepEqual(
    { ...failed, time: undefined, pid: undefined, hostname: undefined, msg: undefined, retryAt: undefined },
    {
      level: 'warn',
      event: 'job:failed',
      jobId: flaky!.id,
      queue: 'default',
      jobName: 'script',
      attempt: 1,
      maxAttempts: 25,
      error: { kind: 'error', name: 'Error', message: 'flaky' },
      time: undefined,
      pid: undefined,
      hostname: undefined,
      msg: undefined,
      retryAt: undefined,
    },
  )
  assert.ok(!Number.isNaN(Date.parse(String(failed?.retryAt))))

  const [deadRecord] = recordsOf(records, 'job:dead')
  assert.equal(deadRecord?.level, 'error')
  assert.equal(deadRecord?.jobId, dead!.id)
  assert.deepEqual((deadRecord?.error as { kind: string }).kind, 'permanent')
  assert.match(String(deadRecord?.msg), /^job \d+ script is dead after attempt 1: bad address$/)

  assert.equal(recordsOf(records, 'job:completed').length, 0, 'no record per completed job at info')
  const [stopped] = recordsOf(records, 'worker:stopped')
  assert.equal(stopped?.reason, 'job-limit')
  assert.deepEqual(stopped?.counts, {
    claimed: 4,
    completed: 2,
    failed: 1,
    dead: 1,
    snoozed: 0,
    leaseLost: 0,
  })
  assert.equal(recordsOf(records, 'worker:stopping').length, 1)
})

test('ferry work logs every finished job at debug (LOG_LEVEL or --verbose), and --log-level wins over LOG_LEVEL', async (t) => {
  const { store, url } = await tempStore(t)
  const client = createClient({ store })
  const args = work(url, '--limit', '1')

  await client.enqueue('script', { steps: [{ result: 1 }] })
  const fromEnv = await spawnFerry(t, args, { env: { LOG_LEVEL: 'debug' } }).waitForExit(20_000)
  const completed = recordsOf(logRecords(fromEnv.stderr), 'job:completed')
  assert.equal(completed.length, 1, fromEnv.stderr)
  assert.equal(completed[0]?.level, 'debug')

  await client.enqueue('script', { steps: [{ result: 2 }] })
  const verbose = await runFerry(t, [...args, '--verbose'])
  assert.equal(recordsOf(logRecords(verbose.stderr), 'job:completed').length, 1, verbose.stderr)

  await client.enqueue('script', { steps: [{ result: 3 }] })
  const quiet = await spawnFerry(t, [...args, '--log-level', 'warn'], {
    env: { LOG_LEVEL: 'debug' },
  }).waitForExit(20_000)
  assert.equal(quiet.code, 0, quiet.stderr)
  assert.equal(quiet.stderr, '', 'nothing at warn when nothing went wrong')
})

test('ferry work refuses a log level or format it does not know, naming where it came from, exit 2', async (t) => {
  const { url } = await tempStore(t)
  const args = work(url)
  const flag = await runFerry(t, [...args, '--log-level', 'loud'])
  assert.equal(flag.code, 2, flag.stderr)
  assert.match(flag.stderr, /^ferry: --log-level: "loud" is not a log level \(use trace, debug, info/)
  const env = await spawnFerry(t, args, { env: { LOG_LEVEL: 'chatty' } }).waitForExit(20_000)
  assert.equal(env.code, 2, env.stderr)
  assert.match(env.stderr, /^ferry: LOG_LEVEL: "chatty" is not a log level/)
  const format = await runFerry(t, [...args, '--log-format', 'xml'])
  assert.equal(format.code, 2, format.stderr)
  assert.match(format.stderr, /^ferry: --log-format: "xml" is not a log format \(use auto, json, pretty\)/)
})

for (const storeUnderTest of STORES) {
  test(
    `ferry work on ${storeUnderTest.name} names its store in its start record`,
    { skip: storeUnderTest.skip },
    async (t) => {
      const harness = await freshStore(t, storeUnderTest)
      const ferry = spawnFerry(t, work(urlOf(harness)))
      await ferry.waitForOutput(WORKER_STARTED)
      ferry.child.kill('SIGTERM')
      const exit = await ferry.waitForExit(10_000)
      assert.equal(exit.code, 0, exit.stderr)
      const records = logRecords(exit.stderr)
      assert.equal(recordsOf(records, 'worker:started')[0]?.store, storeUnderTest.name)
      assert.equal(recordsOf(records, 'worker:stopping')[0]?.signal, 'SIGTERM')
    },
  )
}

test('ferry work starting on a paused queue logs why it will sit idle', async (t) => {
  const { url } = await tempStore(t)
  const paused = await runCli(url, ['pause', 'mail', '--reason', 'provider down', '--by', 'ada'])
  assert.equal(paused.code, 0, paused.stderr)
  const exit = await runFerry(t, work(url, '--queues', 'mail,default', '--time-limit', '500ms'))
  assert.equal(exit.code, 0, exit.stderr)
  const [record] = recordsOf(logRecords(exit.stderr), 'queue:paused')
  assert.deepEqual(
    [record?.level, record?.queue, record?.pausedBy, record?.reason],
    ['warn', 'mail', 'ada', 'provider down'],
  )
  assert.match(
    String(record?.msg),
    /^queue mail is paused since .* by ada \(provider down\): its jobs wait for `ferry resume mail`$/,
  )
})

/** `script` from util-linux, which runs a command on a pseudo-terminal; null where it is missing. */
const SCRIPT = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0 ? 'script' : null

/** `ferry <args>` on a pseudo-terminal: everything it wrote there, once it exited. */
function runOnTerminal(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  const quote = (word: string): string => `'${word.replaceAll("'", "'\\''")}'`
  const command = [process.execPath, '--import', 'tsx', join(REPO_ROOT, 'src', 'cli', 'main.ts'), ...args]
    .map(quote)
    .join(' ')
  const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'dumb' }
  for (const name of ['FERRY_STORE', 'NODE_TEST_CONTEXT', 'FORCE_COLOR', 'NO_COLOR', 'LOG_LEVEL'])
    delete env[name]
  // -e: script exits with the command's code; the typescript file is /dev/null, output comes on stdout.
  const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { cwd: REPO_ROOT, env })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  return within(
    20_000,
    `ferry ${args.join(' ')} on a terminal`,
    new Promise((resolve, reject) => {
      child.on('error', reject)
      child.on('close', (code) => resolve({ code, output: output.replaceAll('\r\n', '\n') }))
    }),
  )
}

test(
  'ferry work on a terminal writes readable lines and, while jobs run, a summary line',
  { skip: SCRIPT === null ? 'util-linux script is not installed' : false },
  async (t) => {
    const { store, url } = await tempStore(t)
    await createClient({ store }).enqueueMany([
      script({ sleepMs: 1500, result: 'slow' }),
      script({ throw: 'flaky' }, { result: 'second try' }),
    ])
    const { code, output } = await runOnTerminal(work(url, '--limit', '3', '--summary-interval', '200ms'))
    assert.equal(code, 0, output)
    assert.doesNotMatch(output, /^\{/m, 'no JSON on a terminal')
    assert.match(
      output,
      /^\d\d:\d\d:\d\d INFO {2}worker \S+ on default .*; Ctrl-C stops after the running jobs$/m,
    )
    assert.match(output, /^\d\d:\d\d:\d\d WARN {2}job \d+ script failed \(attempt 1\/25\): flaky; retry at /m)
    assert.match(output, /^\d\d:\d\d:\d\d ----- \d+ done, [\d.]+\/s, 1 failed, 0 dead, [12] of 10 active$/m)
    assert.match(output, /^\d\d:\d\d:\d\d INFO {2}stopped \(job-limit\): 2 completed, 1 failed and retried/m)
  },
)

test('the pretty form shows the local time, the level and the message; colours only when asked', () => {
  const time = new Date(2026, 11, 7, 14, 3, 27).toISOString()
  const plain = (text: string): string => text
  assert.equal(
    formatLogLine({ level: 'warn', time, msg: 'job 4 x failed' }, plain),
    '14:03:27 WARN  job 4 x failed',
  )
  assert.equal(formatLogLine({ level: 'info', time, msg: 'stopped' }, plain), '14:03:27 INFO  stopped')
  const tagged = (text: string, color: string): string => `<${color}>${text}</${color}>`
  assert.equal(
    formatLogLine({ level: 'error', time, msg: 'dead' }, tagged),
    '<dim>14:03:27</dim> <red>ERROR dead</red>',
  )
})

test('the summary counts jobs done, the rate since the last line, failures and the slots in use', () => {
  const before = { completed: 1000, failed: 2, dead: 0, active: 3 }
  const after = { completed: 1280, failed: 3, dead: 1, active: 7 }
  assert.equal(formatSummary(after, before, 5000, 10), '1,280 done, 56/s, 3 failed, 1 dead, 7 of 10 active')
  assert.equal(
    formatSummary(after, { ...after }, 5000, 10),
    '1,280 done, 0.0/s, 3 failed, 1 dead, 7 of 10 active',
  )
  assert.equal(
    formatSummary({ ...before, completed: 1003 }, before, 2000, 4),
    '1,003 done, 1.5/s, 2 failed, 0 dead, 3 of 4 active',
  )
})

test('a store outage is logged once at warn, the retries at debug, and a record when the store answers again', async (t) => {
  const { store, path, openPeer } = await tempStore(t)
  await createClient({ store }).enqueue('ping', null)
  const workerStore = await openPeer({ busyTimeoutMs: 10 })
  // Another connection holds the write lock: the worker's claims fail with SQLITE_BUSY.
  const lock = holdWriteLock(t, path)

  const lines: string[] = []
  const logger = createLogger({
    level: 'debug',
    format: 'json',
    paint: (text) => text,
    destination: (line) => lines.push(line),
  })
  const { worker, errors } = createWorker(t, { store: workerStore, handlers: { ping: () => 'pong' } })
  logWorkerEvents(logger, worker, () => null)
  defer(t, lock.release) // before the worker is stopped
  await worker.start()
  await waitFor(() => errors.length >= 3, 5000, 'three store errors')
  lock.release()
  await waitFor(() => worker.counts.completed === 1, 5000, 'the job completing')
  await stopWorker(worker)

  const records = logRecords(lines.join(''))
  const storeErrors = recordsOf(records, 'worker:error')
  assert.ok(storeErrors.length >= 3, lines.join(''))
  assert.equal(storeErrors[0]?.level, 'warn')
  assert.match(String(storeErrors[0]?.msg), /^store error, retrying: .*SQLITE_BUSY/)
  assert.ok(storeErrors.slice(1).every((record) => record.level === 'debug'))
  const [recovered] = recordsOf(records, 'store:recovered')
  assert.equal(recovered?.level, 'info')
  assert.ok(Number(recovered?.errors) >= 3)
  assert.match(String(recovered?.msg), /^the store answers again, after \d+ errors in \d+\.\d s$/)
})
