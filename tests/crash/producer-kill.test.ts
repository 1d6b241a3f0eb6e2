/**
 * DESIGN.md's first reliability invariant: every enqueue that resolved is in the store after the
 * producer is SIGKILLed at any moment. A real producer process (tests/fixtures/producer.ts)
 * enqueues as fast as it can and prints each id the moment its enqueue resolved; we kill it at a
 * random moment, many times over on the same store, then check every printed job. Once on a
 * SQLite file, once on a PostgreSQL schema.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test, type TestContext } from 'node:test'

import type { Job, Store } from '../../src/index.js'
import { SqliteStore } from '../../src/sqlite.js'
import { jobFor } from '../fixtures/producer.js'
import { postgresUnreachableReason, tempSchema } from '../support/postgres-harness.js'
import { skipUnlessAvailable } from '../support/services.js'
import { allJobs } from '../support/store-harness.js'
import { getJob } from '../support/store-calls.js'

const FIXTURE = fileURLToPath(new URL('../fixtures/producer.ts', import.meta.url))
const ROUNDS = 24
/** Fewer on PostgreSQL: each round is mostly a process start, and the SQLite test covers timing. */
const POSTGRES_ROUNDS = 5
const MAX_KILL_DELAY_MS = 300
/** Each round numbers its jobs from round × SEQ_STRIDE, so payloads stay distinct across rounds. */
const SEQ_STRIDE = 10_000_000

interface Printed {
  id: string
  seq: number
  priority: number
}

interface Round {
  printed: Printed[]
  killDelayMs: number
}

/** Starts the producer, SIGKILLs it `killDelayMs` after its first line, and returns every complete line it printed. */
function runAndKill(storeUrl: string, firstSeq: number, killDelayMs: number): Promise<Round> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, storeUrl, String(firstSeq)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    let killTimer: NodeJS.Timeout | undefined
    const startTimer = setTimeout(() => child.kill('SIGKILL'), 30_000)
    child.stdout.setEncoding('utf8')
    child.stderr.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk
      if (killTimer === undefined && stdout.includes('\n')) {
        clearTimeout(startTimer)
        killTimer = setTimeout(() => child.kill('SIGKILL'), killDelayMs)
      }
    })
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk
    })
    child.on('error', reject)
    // 'close' comes after the process exited and its pipes are drained: no printed line is missed.
    child.on('close', (code, signal) => {
      clearTimeout(startTimer)
      clearTimeout(killTimer)
      if (killTimer === undefined) {
        reject(
          new Error(`the producer printed nothing in 30 s (exit ${code}, ${signal}); stderr:\n${stderr}`),
        )
        return
      }
      if (signal !== 'SIGKILL') {
        reject(new Error(`the producer ended by itself (exit ${code}, signal ${signal}); stderr:\n${stderr}`))
        return
      }
      // The last line may be cut short by the kill: only complete lines count.
      const lines = stdout.split('\n').slice(0, -1)
      const printed = lines.map((line): Printed => {
        const match = /^(\d+) (\d+) (-?\d+)$/.exec(line)
        assert.ok(match !== null, `unexpected producer output: ${JSON.stringify(line)}`)
        return { id: match[1]!, seq: Number(match[2]), priority: Number(match[3]) }
      })
      resolve({ printed, killDelayMs })
    })
  })
}

function assertIntact(job: Job | null, seq: number, label: string): void {
  assert.ok(job !== null, `${label}: job is missing`)
  const expected = jobFor(seq)
  const delayMs = expected.options.delayMs ?? 0
  assert.equal(job.name, expected.name, label)
  assert.equal(job.queue, expected.options.queue, label)
  assert.deepEqual(job.payload, expected.payload, label)
  assert.equal(job.priority, expected.options.priority, label)
  assert.equal(job.uniqueKey, expected.options.uniqueKey ?? null, label)
  assert.equal(job.state, delayMs > 0 ? 'scheduled' : 'ready', label)
  assert.equal(job.runAt, job.createdAt + delayMs, label)
  assert.equal(job.attempts, 0, label)
  assert.equal(job.maxAttempts, 25, label)
}

/** Kills the producer `rounds` times on the store at `storeUrl`, then checks every printed job in it. */
async function killAndCheck(
  t: TestContext,
  storeUrl: string,
  rounds: number,
  openStore: () => Promise<Store>,
): Promise<void> {
  const printed = new Map<string, Printed>()
  for (let round = 0; round < rounds; round++) {
    const killDelayMs = Math.floor(Math.random() * (MAX_KILL_DELAY_MS + 1))
    const result = await runAndKill(storeUrl, round * SEQ_STRIDE, killDelayMs)
    assert.ok(result.printed.length > 0)
    for (const line of result.printed) {
      assert.ok(!printed.has(line.id), `id ${line.id} was handed out twice`)
      printed.set(line.id, line)
    }
    t.diagnostic(
      `round ${round}: killed ${killDelayMs} ms after the first line; ${result.printed.length} ids printed`,
    )
  }

  const store = await openStore()
  try {
    // Every printed id is there, exactly as enqueued.
    for (const { id, seq, priority } of printed.values()) {
      assert.equal(
        priority,
        jobFor(seq).options.priority,
        `the producer printed a wrong priority for seq ${seq}`,
      )
      assertIntact(await getJob(store, id), seq, `job ${id} (seq ${seq})`)
    }
    // Jobs committed but not yet printed when the kill came may be there too: each whole, none twice.
    const jobs = await allJobs(store)
    const seen = new Set<number>()
    for (const job of jobs) {
      const seq = (job.payload as { seq: number }).seq
      assert.ok(!seen.has(seq), `seq ${seq} is stored twice`)
      seen.add(seq)
      assertIntact(job, seq, `stored job ${job.id}`)
    }
    assert.ok(jobs.length >= printed.size)
    t.diagnostic(
      `${printed.size} printed ids checked; ${jobs.length - printed.size} more jobs committed unprinted`,
    )
  } finally {
    await store.close()
  }
}

test('every enqueue that resolved is in the store after the producer is SIGKILLed at random moments', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-producer-kill-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const dbPath = join(dir, 'ferry.db')
  await killAndCheck(t, `sqlite://${dbPath}`, ROUNDS, () => SqliteStore.open({ path: dbPath }))
})

const postgresOptions = skipUnlessAvailable(await postgresUnreachableReason())

test(
  'every enqueue that resolved is in PostgreSQL after the producer is SIGKILLed at random moments',
  postgresOptions,
  async (t) => {
    const schema = tempSchema(t)
    await schema.open()
    await killAndCheck(t, schema.url, POSTGRES_ROUNDS, () => schema.open())
  },
)
