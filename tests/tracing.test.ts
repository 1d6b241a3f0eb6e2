/**
 * OpenTelemetry traces (docs/tracing.md), on every store, through the SDK's in-memory exporter:
 * a PRODUCER span per enqueue call, a CONSUMER span per attempt, attempt 1 a child of its
 * enqueue's span, a retry a trace of its own linked back to it; and tracing off, or its package
 * missing, as the user sees them.
 */
import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, test, type TestContext } from 'node:test'

import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base'

import {
  Client,
  MissingPeerDependencyError,
  ValidationError,
  type JobHandlers,
  type Store,
  type WorkerEvents,
  type WorkerOptions,
} from '../src/index.js'
import { openTracing } from '../src/tracing/open-tracing.js'
import { waitForEvent } from './support/async.js'
import { getExistingJob } from './support/store-calls.js'
import { newJob } from './support/store-harness.js'
import { freshStore, STORES } from './support/stores.js'
import { createWorker, fixtureHandlers } from './support/workers.js'

const exporter = new InMemorySpanExporter()
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
const contextManager = new AsyncLocalStorageContextManager()
// Registered globally, as an app's SDK would: tracing on by default must find it, and tracing off must ignore it.
before(() => {
  context.setGlobalContextManager(contextManager.enable())
  trace.setGlobalTracerProvider(provider)
})
after(async () => {
  await provider.shutdown()
  trace.disable()
  context.disable()
})
beforeEach(() => exporter.reset())

const app = trace.getTracer('app')

function spansNamed(name: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((span) => span.name === name)
}

function only<T>(items: readonly T[], what: string): T {
  assert.equal(items.length, 1, `one ${what}, got ${items.length}`)
  return items[0]!
}

/** Runs a worker on `store` with these inline handlers until job `id` ends so (the worker is stopped after the test). */
async function runUntil(
  t: TestContext,
  store: Store,
  handlers: JobHandlers | string,
  event: 'job:completed' | 'job:dead',
  id: string,
  options: Pick<WorkerOptions, 'tracing' | 'queues' | 'strategy'> = {},
): Promise<void> {
  const { worker } = createWorker(t, { store, handlers, concurrency: 1, ...options })
  const ended = waitForEvent<WorkerEvents, typeof event>(worker, event, (...[job]) => job.id === id, 10_000)
  await worker.start()
  await ended
}

for (const storeUnderTest of STORES) {
  describe(`tracing on ${storeUnderTest.name}`, { skip: storeUnderTest.skip }, () => {
    test('an enqueue is a PRODUCER span and its first attempt a CONSUMER child, with the handler inside it', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      const client = new Client({ store })
      const { id } = await app.startActiveSpan('request', async (request) => {
        try {
          return await client.enqueue('resize', { w: 10 }, { queue: 'images' })
        } finally {
          request.end()
        }
      })
      const handlers = { resize: () => app.startActiveSpan('inside the handler', (span) => span.end()) }
      await runUntil(t, store, handlers, 'job:completed', id, { queues: ['images'] })
      const request = only(spansNamed('request'), 'request span')
      const send = only(spansNamed('send images'), 'send span')
      assert.equal(send.kind, SpanKind.PRODUCER)
      assert.equal(send.parentSpanContext?.spanId, request.spanContext().spanId)
      assert.deepEqual(send.attributes, {
        'messaging.system': 'ferry',
        'messaging.operation.name': 'send',
        'messaging.operation.type': 'send',
        'messaging.destination.name': 'images',
        'messaging.message.id': id,
        'ferry.job.name': 'resize',
      })
      const job = await getExistingJob(store, id)
      const { traceId, spanId } = send.spanContext()
      assert.deepEqual(job.trace, { traceparent: `00-${traceId}-${spanId}-01` })
      assert.ok(!JSON.stringify(job.payload).includes(traceId), 'the payload is left as it was')

      const process = only(spansNamed('process images'), 'process span')
      assert.equal(process.kind, SpanKind.CONSUMER)
      assert.equal(process.spanContext().traceId, traceId)
      assert.equal(process.parentSpanContext?.spanId, spanId)
      assert.deepEqual(process.links, [])
      assert.equal(process.status.code, SpanStatusCode.UNSET)
      assert.deepEqual(process.attributes, {
        'messaging.system': 'ferry',
        'messaging.operation.name': 'process',
        'messaging.operation.type': 'process',
        'messaging.destination.name': 'images',
        'messaging.message.id': id,
        'ferry.job.name': 'resize',
        'ferry.job.attempt': 1,
        'ferry.job.outcome': 'completed',
      })
      const inside = only(spansNamed('inside the handler'), "the handler's span")
      assert.equal(inside.parentSpanContext?.spanId, process.spanContext().spanId)
    })

    test('a retry is a trace of its own linked to the enqueue span, and failed attempts have error status', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      const client = new Client({ store })
      const { id } = await client.enqueue(
        'flaky',
        {},
        { maxAttempts: 2, backoff: { type: 'fixed', delayMs: 1 } },
      )
      class QuotaError extends Error {
        override name = 'QuotaError'
      }
      const handlers = {
        flaky: () => {
          throw new QuotaError('over quota')
        },
      }
      await runUntil(t, store, handlers, 'job:dead', id)
      const send = only(spansNamed('send default'), 'send span')
      const attempts = spansNamed('process default').sort(
        (a, b) => Number(a.attributes['ferry.job.attempt']) - Number(b.attributes['ferry.job.attempt']),
      )
      assert.deepEqual(
        attempts.map((span) => [span.attributes['ferry.job.attempt'], span.attributes['ferry.job.outcome']]),
        [
          [1, 'retry'],
          [2, 'dead'],
        ],
      )
      const [first, retry] = attempts as [ReadableSpan, ReadableSpan]
      assert.equal(first.parentSpanContext?.spanId, send.spanContext().spanId)
      assert.equal(retry.parentSpanContext, undefined, 'the retry is a root span')
      assert.notEqual(retry.spanContext().traceId, send.spanContext().traceId)
      assert.deepEqual(
        retry.links.map((link) => [link.context.traceId, link.context.spanId]),
        [[send.spanContext().traceId, send.spanContext().spanId]],
      )
      for (const span of attempts) {
        assert.equal(span.status.code, SpanStatusCode.ERROR)
        assert.equal(span.status.message, 'over quota')
        assert.equal(span.attributes['error.type'], 'QuotaError')
        assert.equal(span.events[0]?.name, 'exception')
      }
    })

    test('an enqueueMany is one span with its count, whose context every job carries', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      const client = new Client({ store })
      const results = await client.enqueueMany([
        { name: 'a', payload: 1 },
        { name: 'b', payload: 2, options: { queue: 'other' } },
      ])
      const send = only(spansNamed('send'), 'send span of the batch')
      assert.equal(send.kind, SpanKind.PRODUCER)
      assert.equal(send.attributes['messaging.batch.message_count'], 2)
      assert.equal(send.attributes['messaging.destination.name'], undefined, 'two queues: no one destination')
      const { traceId, spanId } = send.spanContext()
      for (const { id } of results) {
        assert.equal((await getExistingJob(store, id)).trace?.traceparent, `00-${traceId}-${spanId}-01`)
      }
    })

    test('a job enqueued without a trace context starts a trace of its own, unlinked', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      // As a schedule's fire, or a producer that does not trace, writes it.
      const [result] = await store.enqueue({ jobs: [newJob({ name: 'plain' })] })
      await runUntil(t, store, { plain: () => 'ok' }, 'job:completed', result!.id)
      const process = only(spansNamed('process default'), 'process span')
      assert.equal(process.parentSpanContext, undefined)
      assert.deepEqual(process.links, [])
    })

    test('tracing off makes no spans and stores no trace context, even inside a traced request', async (t) => {
      const { store } = await freshStore(t, storeUnderTest)
      const client = new Client({ store, tracing: false })
      const { id } = await app.startActiveSpan('request', async (request) => {
        try {
          return await client.enqueue('quiet', {})
        } finally {
          request.end()
        }
      })
      assert.equal((await getExistingJob(store, id)).trace, null)
      await runUntil(t, store, { quiet: () => null }, 'job:completed', id, { tracing: false })
      assert.deepEqual(
        exporter.getFinishedSpans().map((span) => span.name),
        ['request'],
      )
    })
  })
}

describe('tracing, beyond what depends on the store', () => {
  const sqlite = STORES.find((store) => store.name === 'sqlite')!

  test("continues a producer's trace state, and ignores a trace context that is not valid", async (t) => {
    const { store } = await freshStore(t, sqlite)
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
    const [good, bad] = await store.enqueue({
      jobs: [
        newJob({ name: 'ok', trace: { traceparent, tracestate: 'rojo=00f067aa0ba902b7' } }),
        newJob({ name: 'ok', trace: { traceparent: '00-not-a-trace-01' } }),
      ],
    })
    // At concurrency 1 the jobs run in enqueue order: the second's end is the end of both.
    await runUntil(t, store, { ok: () => 'done' }, 'job:completed', bad!.id)
    const spans = spansNamed('process default')
    const [continued, fresh] = [good!.id, bad!.id].map((id) =>
      only(
        spans.filter((span) => span.attributes['messaging.message.id'] === id),
        `span of job ${id}`,
      ),
    ) as [ReadableSpan, ReadableSpan]
    assert.equal(continued.spanContext().traceId, '4bf92f3577b34da6a3ce929d0e0e4736')
    assert.equal(continued.parentSpanContext?.spanId, '00f067aa0ba902b7')
    assert.equal(continued.spanContext().traceState?.serialize(), 'rojo=00f067aa0ba902b7')
    assert.equal(fresh.parentSpanContext, undefined)
    assert.equal(fresh.attributes['ferry.job.outcome'], 'completed')
  })

  test('under an isolating strategy, the attempt span still covers each attempt', async (t) => {
    const { store } = await freshStore(t, sqlite)
    const client = new Client({ store })
    const { id } = await client.enqueue('ok', { n: 1 })
    await runUntil(t, store, fixtureHandlers('ok.mjs'), 'job:completed', id, { strategy: 'threads' })
    const send = only(spansNamed('send default'), 'send span')
    const process = only(spansNamed('process default'), 'process span')
    assert.equal(process.parentSpanContext?.spanId, send.spanContext().spanId)
    assert.equal(process.attributes['ferry.job.outcome'], 'completed')
  })
})

describe('turning tracing on and off', () => {
  const missing = (): never => {
    throw Object.assign(new Error("Cannot find module '@opentelemetry/api'"), { code: 'MODULE_NOT_FOUND' })
  }

  test('asked for with its package missing, it fails with MissingPeerDependencyError', () => {
    for (const option of [true, {}]) {
      assert.throws(
        () => openTracing(option, 'tracing', missing),
        (error: unknown) =>
          error instanceof MissingPeerDependencyError &&
          error.code === 'missing_peer_dependency' &&
          error.packageName === '@opentelemetry/api',
      )
    }
  })

  test('by default, a missing package turns tracing off silently, and false never loads it', () => {
    assert.equal(openTracing(undefined, 'tracing', missing), null)
    assert.equal(
      openTracing(false, 'tracing', () => assert.fail('loaded')),
      null,
    )
  })

  test('by default, nothing registered with OpenTelemetry (no SDK started) loads nothing and traces nothing', (t) => {
    // The API's global state, as the SDK's registration leaves it; taken away to play a process without one.
    const key = Symbol.for('opentelemetry.js.api.1')
    const state = globalThis as Record<symbol, unknown>
    const saved = state[key]
    t.after(() => {
      state[key] = saved
    })
    delete state[key]
    assert.equal(
      openTracing(undefined, 'tracing', () => assert.fail('loaded')),
      null,
    )
    assert.throws(
      () => openTracing(true, 'tracing', missing),
      MissingPeerDependencyError,
      'true loads it all the same',
    )
    state[key] = saved
    assert.notEqual(openTracing(undefined, 'tracing'), null, 'registered: traced')
  })

  test('FERRY_TRACING turns the default on or off, and refuses other words', (t) => {
    const saved = process.env.FERRY_TRACING
    t.after(() => {
      if (saved === undefined) delete process.env.FERRY_TRACING
      else process.env.FERRY_TRACING = saved
    })
    process.env.FERRY_TRACING = 'off'
    assert.equal(
      openTracing(undefined, 'tracing', () => assert.fail('loaded')),
      null,
    )
    process.env.FERRY_TRACING = 'on'
    assert.throws(() => openTracing(undefined, 'tracing', missing), MissingPeerDependencyError)
    assert.equal(openTracing(false, 'tracing', missing), null, 'the option wins over the variable')
    process.env.FERRY_TRACING = 'maybe'
    assert.throws(
      () => openTracing(undefined, 'tracing', missing),
      (error: unknown) => error instanceof ValidationError && error.field === 'FERRY_TRACING',
    )
  })

  test('refuses a tracing option of the wrong type, naming it', () => {
    assert.throws(
      () => openTracing('yes' as never, 'tracing'),
      (error: unknown) => error instanceof ValidationError && error.field === 'tracing',
    )
    assert.throws(
      () => openTracing({ tracerProvider: {} as never }, 'tracing'),
      (error: unknown) => error instanceof ValidationError && error.field === 'tracing.tracerProvider',
    )
  })
})
