/**
 * A Worker refuses a misspelt option, its backoff's included, before it does anything: a typo of
 * `concurrency` or of a backoff setting must not start a worker on the defaults.
 */
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'

import {
  createClient,
  createExecutor,
  ValidationError,
  Worker,
  type BackoffOptions,
  type PoolExecutorOptions,
  type WorkerOptions,
} from '../../src/index.js'
import { unknownOption } from '../support/unknown-option.js'
import { tempStore } from '../support/sqlite-harness.js'
import { getExistingJob } from '../support/store-calls.js'
import { createWorker, fixtureHandlers } from '../support/workers.js'

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
  const job = await getExistingJob(store, id)
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

/** Makes a worker of the scripted handlers with these execution options (strategy, pool, executor). */
async function execution(t: TestContext, options: Partial<WorkerOptions>): Promise<() => Worker> {
  const { store } = await tempStore(t)
  return () => new Worker({ store, handlers: SCRIPTED, ...options })
}

/** A ValidationError of `field` whose message matches `pattern`. */
function invalid(field: string, pattern: RegExp): (error: unknown) => boolean {
  return (error) => error instanceof ValidationError && error.field === field && pattern.test(error.message)
}

test('pool options are checked where they sit, inside the worker options, before any child starts', async (t) => {
  assert.throws(
    await execution(t, { strategy: 'processes', pool: { maxJobPerChild: 3 } as PoolExecutorOptions }),
    unknownOption('pool.maxJobPerChild', 'maxJobsPerChild', ['size', 'maxJobsPerChild', 'maxRssBytes']),
  )
  assert.throws(
    await execution(t, { strategy: 'threads', pool: { size: 0 } }),
    invalid('pool.size', /positive integer/),
  )
})

test('a worker refuses pool options its strategy cannot use, and an executor given beside a strategy', async (t) => {
  assert.throws(await execution(t, { pool: { size: 2 } }), invalid('pool', /inline runs no children/))
  assert.throws(
    await execution(t, { strategy: 'fork', pool: { maxJobsPerChild: 5 } as PoolExecutorOptions }),
    unknownOption('pool.maxJobsPerChild', null, ['size', 'maxHeapMb', 'killGraceMs']),
  )
  assert.throws(
    await execution(t, { strategy: 'processes', executor: createExecutor('inline', SCRIPTED) }),
    invalid('strategy', /not both/),
  )
})

test('a worker refuses a heartbeat interval that is not a positive integer, or whose record would outlive a day', async (t) => {
  const { store } = await tempStore(t)
  for (const heartbeatMs of [0, 1.5, -1, 8 * 3_600_000 + 1, '5000']) {
    assert.throws(
      () => new Worker({ store, handlers: SCRIPTED, heartbeatMs } as WorkerOptions),
      (error: unknown) => error instanceof ValidationError && error.field === 'heartbeatMs',
      `heartbeatMs ${String(heartbeatMs)}`,
    )
  }
})
