/**
 * A Worker refuses a misspelt option, its backoff's included, before it does anything: a typo of
 * `concurrency` or of a backoff setting must not start a worker on the defaults.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { createClient, Worker, type BackoffOptions, type WorkerOptions } from '../../src/index.js'
import { unknownOption } from '../helpers/unknown-option.js'
import { createWorker, fixtureHandlers, getJob, tempStore } from '../helpers/worker-helpers.js'

const SCRIPTED = fixtureHandlers('scripted.ts')

test('a worker with a misspelt option is not created, and its queue is left alone', async (t) => {
  const { store } = await tempStore(t)
  const { id } = await createClient({ store }).enqueue('ok', {}, { queue: 'x' })
  assert.throws(
    () => new Worker({ store, handlers: SCRIPTED, concurency: 3, queues: ['x'] } as WorkerOptions),
    unknownOption('concurency', 'concurrency', [
      'store',
      'handlers',
      'queues',
      'concurrency',
      'backoff',
      'strategy',
    ]),
  )
  assert.throws(
    () => new Worker({ store, handlers: SCRIPTED, queue: 'x', strategy: 'processes' } as WorkerOptions),
    unknownOption('queue', 'queues', ['queues']),
  )
  const job = await getJob(store, id)
  assert.equal(job.state, 'ready')
  assert.equal(job.attempts, 0)
})

test('a misspelt backoff option is refused where it sits, inside the worker options', async (t) => {
  const { store } = await tempStore(t)
  assert.throws(
    () => new Worker({ store, handlers: SCRIPTED, backoff: { base: 10 } as BackoffOptions }),
    unknownOption('backoff.base', 'baseMs', ['baseMs', 'factor', 'maxMs']),
  )
  assert.throws(
    () => new Worker({ store, handlers: SCRIPTED, backoff: 'fast' as BackoffOptions }),
    (error: unknown) => error instanceof Error && /^backoff: must be an object/.test(error.message),
  )
})

test('stop refuses a misspelt option instead of stopping some other way', async (t) => {
  const { store } = await tempStore(t)
  const { worker } = createWorker(t, { store, handlers: SCRIPTED })
  await worker.start()
  await assert.rejects(
    worker.stop({ gracefull: false } as { graceful?: boolean }),
    unknownOption('gracefull', 'graceful', ['graceful']),
  )
  assert.equal(await worker.stop(), 'requested')
})
