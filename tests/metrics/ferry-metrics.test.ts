/**
 * registerFerryMetrics on every store: a worker runs jobs that complete, fail and go dead, and
 * the registry then holds their counts, run and wait times, the store's calls, and the gauges
 * read from the store's stats (jobs by state, queue latency).
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, test } from 'node:test'

import { Registry } from 'prom-client'

import {
  createClient,
  registerFerryMetrics,
  ValidationError,
  wrapStore,
  type FerryMetrics,
} from '../../src/index.js'
import { waitFor } from '../support/async.js'
import { REPO_ROOT } from '../support/processes.js'
import { promtoolMissingReason, promtoolProblems } from '../support/promtool.js'
import { skipUnlessAvailable } from '../support/services.js'
import { freshStore, STORES } from '../support/stores.js'
import { startWorker, stopWorker } from '../support/workers.js'

type Sample = { labels: Record<string, string | number>; value: number; metricName?: string }

async function samples(registry: Registry, name: string): Promise<Sample[]> {
  const metric = registry.getSingleMetric(name)
  assert.ok(metric, `${name} is registered`)
  return (await metric.get()).values as Sample[]
}

/** The value of the sample with exactly these labels (and this sample name, for histograms). */
async function valueOf(
  registry: Registry,
  name: string,
  labels: Record<string, string>,
  sampleName = name,
): Promise<number | undefined> {
  const found = (await samples(registry, name)).find(
    (s) =>
      (s.metricName ?? name) === sampleName &&
      Object.keys(labels).length === Object.keys(s.labels).filter((k) => k !== 'le').length &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  )
  return found?.value
}

const promtool = promtoolMissingReason()
const WITHOUT_PROM_CLIENT = join(REPO_ROOT, 'tests', 'support', 'without-prom-client.cjs')

for (const store of STORES) {
  describe(`Ferry's metrics on ${store.name}`, { skip: store.skip }, () => {
    test('counts jobs by outcome, times their runs, waits and store calls, and reads gauges from stats', async (t) => {
      const { store: raw } = await freshStore(t, store)
      const registry = new Registry()
      const metrics: FerryMetrics = registerFerryMetrics({ registry, store: raw, statsIntervalMs: 100 })
      t.after(() => metrics.close())
      const instrumented = metrics.instrumentStore(raw)
      const client = createClient({ store: instrumented })
      const handlers = {
        ok: async () => 'done',
        boom: async () => {
          throw new Error('boom')
        },
      }
      // A job no worker takes, ready for five seconds already: the queue's latency.
      await client.enqueue('ok', null, { queue: 'waiting', runAt: Date.now() - 5000 })
      for (let i = 0; i < 3; i++) await client.enqueue('ok', { i }, { queue: 'mail' })
      await client.enqueue('boom', null, { queue: 'mail', maxAttempts: 2 })
      const { worker } = await startWorker(t, {
        store: instrumented,
        handlers,
        queues: ['mail'],
        concurrency: 4,
        backoff: { baseMs: 10 },
      })
      metrics.observeWorker(worker)
      await waitFor(
        () => worker.counts.completed === 3 && worker.counts.dead === 1,
        10_000,
        'the jobs to end',
      )

      const mail = (name: string) => ({ queue: 'mail', name })
      assert.equal(await valueOf(registry, 'ferry_jobs_enqueued_total', mail('ok')), 3)
      assert.equal(await valueOf(registry, 'ferry_jobs_enqueued_total', { queue: 'waiting', name: 'ok' }), 1)
      assert.equal(await valueOf(registry, 'ferry_jobs_started_total', mail('ok')), 3)
      assert.equal(await valueOf(registry, 'ferry_jobs_started_total', mail('boom')), 2)
      assert.equal(await valueOf(registry, 'ferry_jobs_completed_total', mail('ok')), 3)
      assert.equal(await valueOf(registry, 'ferry_jobs_failed_total', mail('boom')), 2)
      assert.equal(await valueOf(registry, 'ferry_jobs_retried_total', mail('boom')), 1)
      assert.equal(await valueOf(registry, 'ferry_jobs_dead_total', mail('boom')), 1)
      const runCount = 'ferry_job_run_duration_seconds_count'
      assert.equal(await valueOf(registry, 'ferry_job_run_duration_seconds', mail('ok'), runCount), 3)
      assert.equal(await valueOf(registry, 'ferry_job_run_duration_seconds', mail('boom'), runCount), 2)
      const waitCount = 'ferry_job_wait_duration_seconds_count'
      assert.equal(await valueOf(registry, 'ferry_job_wait_duration_seconds', mail('boom'), waitCount), 2)
      const operations = new Set(
        (await samples(registry, 'ferry_store_operation_duration_seconds')).map((s) => s.labels.operation),
      )
      for (const timed of ['enqueue', 'claim', 'settle'])
        assert.ok(operations.has(timed), `${timed} is timed`)
      assert.ok(!operations.has('waitForWork'), 'waitForWork is not timed: it waits by design')

      assert.equal(await valueOf(registry, 'ferry_jobs', { queue: 'mail', state: 'completed' }), 3)
      assert.equal(await valueOf(registry, 'ferry_jobs', { queue: 'mail', state: 'dead' }), 1)
      assert.equal(await valueOf(registry, 'ferry_jobs', { queue: 'mail', state: 'ready' }), 0)
      assert.equal(await valueOf(registry, 'ferry_jobs', { queue: 'waiting', state: 'ready' }), 1)
      const latency = await valueOf(registry, 'ferry_queue_latency_seconds', { queue: 'waiting' })
      assert.ok(latency !== undefined && latency >= 5 && latency < 60, `latency of 'waiting' (${latency})`)
      assert.equal(await valueOf(registry, 'ferry_queue_latency_seconds', { queue: 'mail' }), 0)
      assert.equal(await valueOf(registry, 'ferry_worker_concurrency', {}), 4)
      assert.equal(await valueOf(registry, 'ferry_worker_active_jobs', {}), 0)

      await stopWorker(worker)
      assert.equal(
        await valueOf(registry, 'ferry_worker_concurrency', {}),
        0,
        'a stopped worker is forgotten',
      )
    })
  })
}

describe("Ferry's metrics, whatever the store", () => {
  test('serve the job gauges from the last stats reading, read again at most once per interval', async (t) => {
    const { store: raw } = await freshStore(t, STORES[0]!)
    let reads = 0
    const counting = wrapStore(raw, {
      around(call) {
        if (call.method === 'stats') reads++
        return call.next()
      },
    })
    const registry = new Registry()
    const metrics = registerFerryMetrics({ registry, store: counting, statsIntervalMs: 60_000 })
    t.after(() => metrics.close())
    assert.equal(reads, 0, 'nothing is read before the first scrape')
    for (let i = 0; i < 5; i++) await registry.metrics()
    assert.equal(reads, 1, 'five scrapes, one read')
    await createClient({ store: raw }).enqueue('ok', null)
    assert.equal(await valueOf(registry, 'ferry_jobs', { queue: 'default', state: 'ready' }), undefined)

    // With a short interval, the next reading shows the job.
    const often = new Registry()
    const oftenMetrics = registerFerryMetrics({ registry: often, store: raw, statsIntervalMs: 100 })
    t.after(() => oftenMetrics.close())
    await often.metrics()
    await createClient({ store: raw }).enqueue('ok', null)
    await waitFor(
      async () => (await valueOf(often, 'ferry_jobs', { queue: 'default', state: 'ready' })) === 2,
      5000,
      'a later reading with both jobs',
    )
  })

  test(
    'give an exposition promtool finds nothing wrong with',
    { ...skipUnlessAvailable(promtool) },
    async (t) => {
      const { store: raw } = await freshStore(t, STORES[0]!)
      const registry = new Registry()
      const metrics = registerFerryMetrics({ registry, store: raw })
      t.after(() => metrics.close())
      const client = createClient({ store: metrics.instrumentStore(raw) })
      await client.enqueue('ok', null, { queue: 'mail' })
      assert.equal(await promtoolProblems(await registry.metrics()), '')
    },
  )

  test('refuse unknown options and a stats interval under 100 ms, naming them', () => {
    assert.throws(
      () => registerFerryMetrics({ registry: new Registry(), statsInterval: 5 } as never),
      (error: unknown) => error instanceof ValidationError && error.field === 'statsInterval',
    )
    assert.throws(
      () => registerFerryMetrics({ registry: new Registry(), statsIntervalMs: 10 }),
      (error: unknown) => error instanceof ValidationError && error.field === 'statsIntervalMs',
    )
  })

  test('fail with MissingPeerDependencyError naming prom-client when it is not installed', () => {
    const program = `import('./src/index.ts').then(({ registerFerryMetrics }) => {
      try { registerFerryMetrics() } catch (error) { console.log(error.name, error.code, error.packageName, error.message) }
    })`
    const run = spawnSync(
      process.execPath,
      ['--require', WITHOUT_PROM_CLIENT, '--import', 'tsx', '-e', program],
      { cwd: REPO_ROOT, encoding: 'utf8' },
    )
    assert.equal(run.status, 0, run.stderr)
    assert.match(
      run.stdout,
      /^MissingPeerDependencyError missing_peer_dependency prom-client .*npm install prom-client/,
    )
  })
})
