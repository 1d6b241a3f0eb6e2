/**
 * Security, on every store: queue names, job names, unique keys and payloads never reach SQL or
 * Lua as code (strings built to break out of a quoted literal or a script are stored and read back
 * as plain data, or refused by validation), sizes are capped, and a worker loads handler code only
 * from its own configuration, never from anything in a job.
 */
import assert from 'node:assert/strict'
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { createClient, ValidationError } from '../../src/index.js'
import { allJobs } from '../support/store-harness.js'
import { waitFor } from '../support/async.js'
import { createWorker, stopWorker } from '../support/workers.js'
import { freshStore, STORES } from '../support/stores.js'
import { getJob } from '../support/store-calls.js'

/** Strings that would change a statement or a script if they were ever spliced into one. */
const INJECTIONS = [
  "'); DROP TABLE jobs; --",
  "' OR '1'='1",
  '" OR 1=1 --',
  "1; DELETE FROM jobs WHERE '1'='1",
  "x' UNION SELECT * FROM sqlite_master --",
  '$1; TRUNCATE jobs; --',
  '$$; DROP SCHEMA public CASCADE; $$',
  "]]..redis.call('FLUSHALL')..[[",
  "'..redis.call('DEL', KEYS[1])..'",
  '") redis.call("FLUSHDB") --',
  '{"$gt": ""}',
  '\\x00\\u0000 nul \u0000 inside',
  'emoji 🧨 and ünïcødé',
  '%s%s%s%n',
  '*',
  '{ferry}:jobs',
]

/** A unique key may not hold U+0000 (validation refuses it: PostgreSQL text cannot store it), so keys drop it. */
const keyFor = (text: string): string => text.replaceAll('\u0000', '')
const EVIL_MODULE = fileURLToPath(new URL('../support/handlers/evil-module.mjs', import.meta.url))
const BAD_HANDLERS = fileURLToPath(new URL('../support/handlers/bad-input.mjs', import.meta.url))

for (const storeUnderTest of STORES) {
  describe(`security on ${storeUnderTest.name}`, { skip: storeUnderTest.skip }, () => {
    test('injection strings in payloads, unique keys and results are stored and read back as plain data', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      const client = createClient({ store })
      const ids: string[] = []
      for (const text of INJECTIONS) {
        const { id } = await client.enqueue(
          'ok',
          { text, nested: { [text]: [text] } },
          { uniqueKey: keyFor(text) },
        )
        ids.push(id)
      }
      // The same keys again: each finds its own job, nothing is written.
      for (const [i, text] of INJECTIONS.entries()) {
        assert.deepEqual(await client.enqueue('ok', null, { uniqueKey: keyFor(text) }), {
          id: ids[i],
          created: false,
        })
      }
      const stored = await allJobs(store)
      assert.deepEqual(
        stored.map((job) => [job.uniqueKey, job.payload]),
        INJECTIONS.map((text) => [keyFor(text), { text, nested: { [text]: [text] } }]),
      )
      // Their results go through settle: run them and read each result back.
      const { worker } = createWorker(t, {
        store,
        handlers: { ok: (payload: { text: string }) => ({ echoed: payload.text }) },
        concurrency: 4,
      })
      await worker.start()
      await waitFor(
        async () => (await allJobs(store)).every((job) => job.state === 'completed'),
        20_000,
        'every job completing',
      )
      await stopWorker(worker)
      for (const [i, text] of INJECTIONS.entries()) {
        const job = (await getJob(store, ids[i]!))!
        assert.deepEqual(job.result, { echoed: text }, `job ${i}`)
      }
      assert.equal((await allJobs(store)).length, INJECTIONS.length)
    })

    test('an injection string as a queue or job name is refused by validation, before any store call', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      const client = createClient({ store })
      for (const text of INJECTIONS) {
        await assert.rejects(client.enqueue('ok', null, { queue: text }), (error: unknown) => {
          return error instanceof ValidationError && error.code === 'invalid_queue'
        })
        await assert.rejects(client.enqueue(text, null), (error: unknown) => {
          return error instanceof ValidationError && error.code === 'invalid_name'
        })
        // Admin and worker inputs too: a queue list, a listing filter.
        assert.throws(() => createWorker(t, { store, handlers: { ok: () => 1 }, queues: [text] }), {
          code: 'invalid_queue',
        })
      }
      assert.deepEqual(await allJobs(store), [])
    })

    test('names, unique keys and payloads past their size caps are refused and nothing is written', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      const client = createClient({ store })
      await assert.rejects(client.enqueue('n'.repeat(129), null), { code: 'invalid_name' })
      await assert.rejects(client.enqueue('ok', null, { queue: 'q'.repeat(129) }), { code: 'invalid_queue' })
      await assert.rejects(client.enqueue('ok', null, { uniqueKey: 'k'.repeat(256) }), {
        code: 'invalid_unique_key',
      })
      await assert.rejects(client.enqueue('ok', 'x'.repeat(10 * 1024 * 1024)), { code: 'payload_too_large' })
      await assert.rejects(client.enqueue('ok', { deep: 'x'.repeat(1024 * 1024) }), {
        code: 'payload_too_large',
      })
      // At the caps, they are taken.
      await client.enqueue('n'.repeat(128), 'x'.repeat(1024 * 1024 - 2), {
        queue: 'q'.repeat(128),
        uniqueKey: 'k'.repeat(255),
      })
      assert.equal((await allJobs(store)).length, 1)
    })

    test('a worker loads handler code only from its own configuration, whatever a job names or carries', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      const dir = mkdtempSync(join(tmpdir(), 'ferry-security-'))
      t.after(() => rmSync(dir, { recursive: true, force: true }))
      const marker = join(dir, 'evil-module-was-loaded')
      process.env.FERRY_EVIL_MARKER = marker
      t.after(() => delete process.env.FERRY_EVIL_MARKER)
      const client = createClient({ store })
      // Jobs that point at a module by every field a job has.
      const moduleRefs = [EVIL_MODULE, `file://${EVIL_MODULE}`, './evil-module.mjs']
      for (const ref of moduleRefs) {
        await client.enqueue('ok', { handlers: ref, module: ref, import: ref }, { uniqueKey: ref })
      }
      await client.enqueue('evil-module.mjs', null, { maxAttempts: 1 })
      await client.enqueue('file:..', null, { maxAttempts: 1 })
      const { worker } = createWorker(t, { store, handlers: BAD_HANDLERS, concurrency: 2 })
      await worker.start()
      const jobs = await waitFor(
        async () => {
          const all = await allJobs(store)
          // Jobs of names it has no handler for stay ready: the worker never claims them.
          return all.every((job) => job.state !== 'active' && (job.state !== 'ready' || job.name !== 'ok'))
            ? all
            : null
        },
        20_000,
        'every job being final',
      )
      await stopWorker(worker)
      assert.deepEqual(
        jobs.map((job) => [job.name, job.state, job.lastError?.kind ?? null]),
        [
          ['ok', 'completed', null],
          ['ok', 'completed', null],
          ['ok', 'completed', null],
          ['evil-module.mjs', 'ready', null],
          ['file:..', 'ready', null],
        ],
      )
      assert.equal(existsSync(marker), false, 'the module a job named was never loaded')
      // The same module, named by the worker's configuration, is loaded: the marker works. A copy
      // of its own, since a module this process imported before (for another store) runs only once.
      const copy = join(dir, 'evil-module.mjs')
      copyFileSync(EVIL_MODULE, copy)
      const control = createWorker(t, { store, handlers: copy })
      await control.worker.start()
      await stopWorker(control.worker)
      assert.equal(existsSync(marker), true)
    })
  })
}
