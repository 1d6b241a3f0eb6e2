/**
 * DESIGN.md's first reliability invariant for `ferry enqueue --stdin`: an id it printed is a job
 * in the store, even when the command is SIGKILLed mid-stream. The test streams numbered lines
 * into it, kills it at a random point once ids are coming out, and checks every printed id.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { spawnCli } from '../support/processes.js'
import { tempDatabase } from '../support/sqlite-harness.js'
import { allJobs } from '../support/store-harness.js'
import { getJob } from '../support/store-calls.js'

const LINE_COUNT = 20_000
const ROUNDS = 3
/** Lines per write: the stream arrives in pieces, as from a real producer. */
const LINES_PER_WRITE = 250

interface Killed {
  printed: string[]
  linesWritten: number
}

/** Streams LINE_COUNT lines and SIGKILLs the command once it has printed `killAfterIds` ids. */
function streamAndKill(url: string, killAfterIds: number): Promise<Killed> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(url, ['enqueue', '--stdin'])
    let stdout = ''
    let stderr = ''
    let printedCount = 0
    let linesWritten = 0
    let killed = false
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      printedCount += chunk.split('\n').length - 1
      if (!killed && printedCount >= killAfterIds) {
        killed = true
        child.kill('SIGKILL')
      }
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    // Writes after the kill fail with EPIPE: expected.
    child.stdin.on('error', () => {})
    const writeMore = (): void => {
      while (!killed && linesWritten < LINE_COUNT) {
        const lines: string[] = []
        const end = Math.min(LINE_COUNT, linesWritten + LINES_PER_WRITE)
        for (let seq = linesWritten; seq < end; seq++) {
          lines.push(JSON.stringify({ name: 'stream', payload: { seq, pad: 'x'.repeat(seq % 64) } }))
        }
        linesWritten = end
        if (!child.stdin.write(`${lines.join('\n')}\n`)) {
          child.stdin.once('drain', writeMore)
          return
        }
      }
      if (!killed) child.stdin.end()
    }
    writeMore()
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (signal !== 'SIGKILL' || !killed) {
        reject(
          new Error(
            `ferry enqueue ended by itself (exit ${code}, ${signal}) after ${printedCount} ids; stderr:\n${stderr}`,
          ),
        )
        return
      }
      // The last line may be cut short by the kill: only complete lines count.
      resolve({ printed: stdout.split('\n').slice(0, -1), linesWritten })
    })
  })
}

test('every id `ferry enqueue --stdin` printed is stored when it is SIGKILLed while streaming', async (t) => {
  for (let round = 0; round < ROUNDS; round++) {
    await t.test(`round ${round}`, async (t) => {
      const db = tempDatabase(t)
      const killAfterIds = 500 + Math.floor(Math.random() * 4000)
      const { printed, linesWritten } = await streamAndKill(db.url, killAfterIds)
      assert.ok(printed.length >= killAfterIds)
      t.diagnostic(
        `killed after ${printed.length} ids printed, ${linesWritten} of ${LINE_COUNT} lines written`,
      )

      const store = await db.open()
      const stored = await allJobs(store)
      // The n-th id printed is the job of the n-th line.
      for (const [seq, id] of printed.entries()) {
        const job = await getJob(store, id)
        assert.ok(job !== null, `printed id ${id} (line ${seq + 1}) is not in the store`)
        assert.equal((job.payload as { seq: number }).seq, seq, `id ${id}`)
      }
      // Batches commit in order: what is stored is the first lines, each once, and includes all printed.
      assert.ok(stored.length >= printed.length)
      assert.deepEqual(
        stored.map((job) => (job.payload as { seq: number }).seq),
        stored.map((_, seq) => seq),
      )
    })
  }
})
