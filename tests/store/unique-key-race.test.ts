/**
 * Unique keys under concurrency, on every store: four producer processes (tests/fixtures/
 * unique-producer.ts) start at the same moment and enqueue overlapping keys, singly (group commit
 * mixes them with jobs that have no key) and in enqueueMany batches. Every enqueue must resolve:
 * each key ends up as one job, reported `created: true` once and `created: false` with that same
 * id every other time, and no job exists that no producer was told about.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'node:test'

import { allJobs } from '../support/store-harness.js'
import { freshStore, STORES, urlOf } from '../support/stores.js'

const FIXTURE = fileURLToPath(new URL('../fixtures/unique-producer.ts', import.meta.url))
const PRODUCERS = 4
const ROUNDS = 15

interface Printed {
  key?: string
  tag?: string
  id?: string
  created?: boolean
  error?: string
}

interface Producer {
  go(): void
  done: Promise<{ lines: Printed[]; code: number | null; stderr: string }>
}

function startProducer(url: string, tag: string): Producer {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, url, String(ROUNDS), tag], {
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const done = new Promise<{ lines: Printed[]; code: number | null; stderr: string }>((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), 120_000)
    child.on('close', (code) => {
      clearTimeout(killer)
      const lines = stdout
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Printed)
      resolve({ lines, code, stderr })
    })
  })
  return { go: () => child.stdin.end('go\n'), done }
}

for (const store of STORES) {
  describe(
    `unique keys enqueued at once by ${PRODUCERS} processes on ${store.name}`,
    { skip: store.skip },
    () => {
      it('resolves each key to one job, created once, with no error and no stray job', async (t) => {
        const harness = await freshStore(t, store)
        const url = urlOf(harness)
        const producers = Array.from({ length: PRODUCERS }, (_, n) => startProducer(url, `p${n}`))
        // Each producer has opened its store and waits: release them together.
        await new Promise((resolve) => setTimeout(resolve, 2500))
        for (const producer of producers) producer.go()
        const outputs = await Promise.all(producers.map((producer) => producer.done))

        for (const [n, { lines, code, stderr }] of outputs.entries()) {
          const errors = lines.filter((line) => line.error !== undefined).map((line) => line.error)
          assert.deepEqual(errors, [], `producer ${n} had enqueues rejected`)
          assert.equal(code, 0, `producer ${n} exited with ${code}: ${stderr}`)
        }
        const lines = outputs.flatMap((output) => output.lines)
        const byKey = new Map<string, Printed[]>()
        for (const line of lines) {
          if (line.key !== undefined) byKey.set(line.key, [...(byKey.get(line.key) ?? []), line])
        }
        const jobs = await allJobs(harness.store)
        const jobOfKey = new Map(
          jobs.filter((job) => job.uniqueKey !== null).map((job) => [job.uniqueKey!, job]),
        )
        for (const [key, results] of byKey) {
          const job = jobOfKey.get(key)
          assert.ok(job !== undefined, `no job holds ${key}`)
          assert.equal(results.filter((result) => result.created).length, 1, `${key} was created once`)
          assert.deepEqual(
            new Set(results.map((result) => result.id)),
            new Set([job.id]),
            `${key}: every result names its job`,
          )
        }
        const unkeyed = lines.filter((line) => line.tag !== undefined)
        assert.equal(unkeyed.length, PRODUCERS * ROUNDS * 10)
        const tagOf = new Map(jobs.map((job) => [job.id, (job.payload as { name?: string }).name]))
        for (const line of unkeyed)
          assert.equal(tagOf.get(line.id!), line.tag, `job ${line.id} is ${line.tag}`)
        assert.equal(
          jobs.length,
          byKey.size + unkeyed.length,
          'no job beyond those the producers were told of',
        )
      })
    },
  )
}
