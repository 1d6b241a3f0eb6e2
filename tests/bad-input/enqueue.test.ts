/**
 * Bad input at enqueue, on every store: through `ferry enqueue --stdin` (each bad line reported
 * by its number, the good lines stored, exit 1) and through the client (a ValidationError naming
 * the field, nothing written).
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'

import { createClient, ValidationError, type EnqueueOptions } from '../../src/index.js'
import { runCli } from '../support/processes.js'
import { allJobs } from '../support/store-harness.js'
import { freshStore, STORES, urlOf } from '../support/stores.js'

const ONE_MIB = 1024 * 1024

for (const storeUnderTest of STORES) {
  describe(`bad input at enqueue on ${storeUnderTest.name}`, { skip: storeUnderTest.skip }, () => {
    test('ferry enqueue --stdin stores the good lines, reports each bad line by its number and exits 1', async (t) => {
      const harness = await freshStore(t, storeUnderTest)
      const lines = [
        /* 1 */ JSON.stringify({ name: 'good-1', payload: { n: 1 } }),
        /* 2 */ '{"name": "bad-json", ',
        /* 3 */ 'not json at all',
        /* 4 */ JSON.stringify({ name: 'good-2', queue: 'critical', priority: 5 }),
        /* 5 */ '[1, 2, 3]',
        /* 6 */ JSON.stringify({ name: 'job', queue: 'bad queue!' }),
        /* 7 */ JSON.stringify({ name: 'job', priority: 1.5 }),
        /* 8 */ JSON.stringify({ name: 'job', priority: 'high' }),
        /* 9 */ JSON.stringify({ name: 'job', priority: 2 ** 31 }),
        /* 10 */ JSON.stringify({ name: 'big', payload: 'x'.repeat(ONE_MIB + 1) }),
        /* 11 */ JSON.stringify({ name: 'bad name with spaces' }),
        /* 12 */ JSON.stringify({ name: 'job', unknownKey: 1 }),
        /* 13 */ JSON.stringify({ name: 'good-3', payload: "'); DROP TABLE jobs; --" }),
        /* 14 */ '',
        /* 15 */ JSON.stringify({ name: 'job', queue: "default'; DELETE FROM jobs; --" }),
        /* 16 */ JSON.stringify({ name: 'job', maxAttempts: 0 }),
        /* 17 */ '{"name": "good-4"}',
        // Nested past MAX_PAYLOAD_DEPTH: it overflowed the validator's stack and took every line down.
        /* 18 */ `{"name": "deep", "payload": ${'['.repeat(5000)}${']'.repeat(5000)}}`,
        /* 19 */ '{"name": "good-5"}',
      ]
      const { code, stdout, stderr } = await runCli(urlOf(harness), ['enqueue', '--stdin'], lines.join('\n'))
      assert.equal(code, 1, stderr)
      const ids = stdout.trim().split('\n')
      assert.equal(ids.length, 5, stdout)
      const reported = [...stderr.matchAll(/^line (\d+): /gm)].map((match) => Number(match[1]))
      assert.deepEqual(reported, [2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 15, 16, 18], stderr)
      assert.match(stderr, /^line 10: .*(large|bytes)/im, 'the oversized payload says why')
      assert.match(stderr, /^line 18: payload: is nested more than 1000 levels deep/m)
      const jobs = await allJobs(harness.store)
      assert.deepEqual(
        jobs.map((job) => [job.id, job.name, job.queue, job.priority, job.payload]),
        [
          [ids[0], 'good-1', 'default', 0, { n: 1 }],
          [ids[1], 'good-2', 'critical', 5, null],
          [ids[2], 'good-3', 'default', 0, "'); DROP TABLE jobs; --"],
          [ids[3], 'good-4', 'default', 0, null],
          [ids[4], 'good-5', 'default', 0, null],
        ],
      )
    })

    test('the client refuses each bad job with a ValidationError naming the field, and writes nothing', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      const client = createClient({ store })
      const cycle: Record<string, unknown> = {}
      cycle.self = cycle
      let deep: unknown = null
      for (let i = 0; i < 5000; i++) deep = { deeper: deep }
      const cases: [label: string, name: unknown, payload: unknown, options: EnqueueOptions, code: string][] =
        [
          ['a queue name with a space', 'job', null, { queue: 'bad queue' }, 'invalid_queue'],
          ['a queue name with a quote', 'job', null, { queue: "q'; DROP TABLE jobs; --" }, 'invalid_queue'],
          ['an empty queue name', 'job', null, { queue: '' }, 'invalid_queue'],
          ['a queue name of 129 characters', 'job', null, { queue: 'q'.repeat(129) }, 'invalid_queue'],
          ['a fractional priority', 'job', null, { priority: 0.5 }, 'invalid_priority'],
          ['a priority past int32', 'job', null, { priority: 2 ** 31 }, 'invalid_priority'],
          ['a NaN priority', 'job', null, { priority: NaN }, 'invalid_priority'],
          [
            'a priority given as text',
            'job',
            null,
            { priority: '1' as unknown as number },
            'invalid_priority',
          ],
          ['a job name with a slash', '../evil', null, {}, 'invalid_name'],
          ['a job name of 129 characters', 'n'.repeat(129), null, {}, 'invalid_name'],
          ['a job name that is not a string', 42, null, {}, 'invalid_name'],
          ['a payload over 1 MiB', 'job', 'x'.repeat(ONE_MIB), {}, 'payload_too_large'],
          ['a BigInt payload', 'job', { n: 1n }, {}, 'invalid_payload'],
          ['a function payload', 'job', { f: () => 1 }, {}, 'invalid_payload'],
          ['a payload with a cycle', 'job', cycle, {}, 'invalid_payload'],
          ['a payload nested 5,000 deep', 'job', deep, {}, 'invalid_payload'],
          [
            'a unique key of 256 characters',
            'job',
            null,
            { uniqueKey: 'k'.repeat(256) },
            'invalid_unique_key',
          ],
          ['zero attempts', 'job', null, { maxAttempts: 0 }, 'invalid_max_attempts'],
          ['a negative delay', 'job', null, { delayMs: -1 }, 'invalid_delay'],
          ['an empty group', 'job', null, { group: '' }, 'invalid_option'],
          ['a group of 256 characters', 'job', null, { group: 'g'.repeat(256) }, 'invalid_option'],
          ['a group that is not a string', 'job', null, { group: 7 as never }, 'invalid_option'],
          ['a start deadline of 0 ms', 'job', null, { expiresInMs: 0 }, 'invalid_option'],
          [
            'a start deadline before the delay ends',
            'job',
            null,
            { delayMs: 5000, expiresInMs: 5000 },
            'invalid_option',
          ],
          [
            'a start deadline before runAt',
            'job',
            null,
            { runAt: 2e12, expiresAt: 2e12 - 1 },
            'invalid_option',
          ],
          [
            'both expiresInMs and expiresAt',
            'job',
            null,
            { expiresInMs: 1000, expiresAt: 2e12 },
            'invalid_option',
          ],
          [
            'a start deadline that is no instant',
            'job',
            null,
            { expiresAt: 'soon' as never },
            'invalid_run_at',
          ],
        ]
      for (const [label, name, payload, options, code] of cases) {
        await assert.rejects(
          client.enqueue(name as string, payload, options),
          (error: unknown) => error instanceof ValidationError && error.code === code,
          label,
        )
      }
      await client.close()
      assert.deepEqual(await allJobs(store), [])
    })

    test('a client with a smaller payload cap refuses a payload one byte over it', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      const client = createClient({ store, maxPayloadBytes: 1024 })
      // JSON text of a string is its characters plus two quotes.
      await client.enqueue('job', 'x'.repeat(1022))
      await assert.rejects(client.enqueue('job', 'x'.repeat(1023)), { code: 'payload_too_large' })
      await client.close()
      assert.equal((await allJobs(store)).length, 1)
    })
  })
}
