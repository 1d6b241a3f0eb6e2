/**
 * `ferry work --metrics-port` as a user runs it, on every store: a real `ferry work` process serves
 * GET /metrics over HTTP on 127.0.0.1 while it runs jobs enqueued by another process; the names and
 * values are there once the jobs ran, and promtool finds nothing wrong. Bad flag values get the
 * CLI's one-line error.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { describe, test, type TestContext } from 'node:test'

import { createClient, type JobSpec } from '../../src/index.js'
import type { ScriptPayload } from '../support/handlers/scripted.js'
import { waitFor } from '../support/async.js'
import { type FerryProcess, REPO_ROOT, runFerry, spawnFerry } from '../support/processes.js'
import { promtoolMissingReason, promtoolProblems } from '../support/promtool.js'
import { skipUnlessAvailable } from '../support/services.js'
import { tempStore } from '../support/sqlite-harness.js'
import { freshStore, STORES, urlOf } from '../support/stores.js'
import { fixtureHandlers } from '../support/workers.js'

const SCRIPTED = fixtureHandlers('scripted.ts')
const promtool = skipUnlessAvailable(promtoolMissingReason())

function scripted(payload: ScriptPayload, maxAttempts = 1): JobSpec {
  return { name: 'script', payload, options: { queue: 'mail', maxAttempts } }
}

/** The value of the line that starts with this sample (name and labels as the exposition writes them). */
function sample(exposition: string, series: string): number | undefined {
  const line = exposition.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

/** `ferry work --handlers SCRIPTED --metrics-port 0 <args>` on the store, once it says where its metrics are. */
async function workWithMetrics(
  t: TestContext,
  storeUrl: string,
  args: string[] = [],
): Promise<{ ferry: FerryProcess; metricsUrl: string }> {
  const ferry = spawnFerry(t, [
    '--store',
    storeUrl,
    'work',
    '--handlers',
    SCRIPTED,
    '--metrics-port',
    '0',
    ...args,
  ])
  // The worker's log is JSON lines here (stderr is not a terminal): the record names the URL.
  await ferry.waitForOutput(/"event":"metrics:listening"/)
  return { ferry, metricsUrl: /"url":"([^"]+)"/.exec(ferry.stderr)![1]! }
}

/** The exposition, fetched again until it says what `ready` looks for. */
function scrapeUntil(metricsUrl: string, ready: (text: string) => boolean, what: string): Promise<string> {
  return waitFor(
    async () => {
      const text = await (await fetch(metricsUrl)).text()
      return ready(text) ? text : null
    },
    10_000,
    what,
  )
}

for (const store of STORES) {
  describe(`ferry work --metrics-port on ${store.name}`, { skip: store.skip }, () => {
    test('serves GET /metrics on 127.0.0.1 while it works, with the counts of the jobs it ran', async (t) => {
      const harness = await freshStore(t, store)
      const client = createClient({ store: harness.store })
      await client.enqueueMany([
        scripted({ steps: [{ result: 1 }] }),
        scripted({ steps: [{ result: 2 }] }),
        scripted({ steps: [{ throw: 'nope' }] }),
      ])
      const { ferry, metricsUrl: url } = await workWithMetrics(t, urlOf(harness), ['--queues', 'mail'])
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
      const names = 'queue="mail",name="script"'
      const body = await scrapeUntil(
        url,
        (text) => sample(text, `ferry_jobs_dead_total{${names}}`) === 1,
        'the metrics to count the dead job',
      )
      assert.equal(sample(body, `ferry_jobs_completed_total{${names}}`), 2)
      assert.equal(sample(body, `ferry_jobs_started_total{${names}}`), 3)
      assert.equal(sample(body, `ferry_job_run_duration_seconds_count{${names}}`), 3)
      assert.equal(sample(body, `ferry_job_wait_duration_seconds_count{${names}}`), 3)
      assert.equal(sample(body, 'ferry_worker_concurrency'), 10)
      assert.match(body, /^ferry_store_operation_duration_seconds_count\{operation="claim"\} \d+$/m)
      assert.match(body, /^ferry_jobs\{queue="mail",state="(ready|completed|dead)"\} \d+$/m)
      assert.match(body, /^ferry_queue_latency_seconds\{queue="mail"\} [\d.e-]+$/m)
      assert.equal((await fetch(url.replace('/metrics', '/'))).status, 404)

      ferry.child.kill('SIGTERM')
      assert.equal((await ferry.waitForExit(5000)).code, 0)
      await assert.rejects(fetch(url), 'the server closed with the worker')
    })
  })
}

describe('ferry work --metrics-port, whatever the store', () => {
  test('gives an exposition promtool finds nothing wrong with', promtool, async (t) => {
    const { store, url } = await tempStore(t)
    await createClient({ store }).enqueueMany([scripted({ steps: [{ result: 1 }] })])
    const { ferry, metricsUrl } = await workWithMetrics(t, url, ['--queues', 'mail'])
    const body = await scrapeUntil(
      metricsUrl,
      (text) => text.includes('ferry_jobs_completed_total{'),
      'a completed job in the metrics',
    )
    assert.equal(await promtoolProblems(body), '')
    ferry.child.kill('SIGTERM')
    await ferry.waitForExit(5000)
  })

  test('listens on the address --metrics-host gives', async (t) => {
    const { url } = await tempStore(t)
    const { ferry, metricsUrl } = await workWithMetrics(t, url, ['--metrics-host', '::1'])
    assert.match(metricsUrl, /^http:\/\/\[::1\]:\d+\/metrics$/)
    assert.equal((await fetch(metricsUrl)).status, 200)
    ferry.child.kill('SIGTERM')
    await ferry.waitForExit(5000)
  })

  test('refuses a bad port, a port in use, or a host without a port, in one line, exit 2', async (t) => {
    const { url } = await tempStore(t)
    const work = ['--store', url, 'work', '--handlers', SCRIPTED]
    const refused = async (args: string[], pattern: RegExp) => {
      const exit = await runFerry(t, [...work, ...args])
      assert.equal(exit.code, 2, exit.stderr)
      assert.ok(!exit.stderr.trimEnd().includes('\n'), `one line:\n${exit.stderr}`)
      assert.match(exit.stderr, pattern)
    }
    await refused(['--metrics-port', 'http'], /--metrics-port: "http" is not an integer from 0 to 65535/)
    await refused(['--metrics-port', '70000'], /--metrics-port: "70000" is not an integer from 0 to 65535/)
    await refused(['--metrics-host', '0.0.0.0'], /--metrics-host: needs --metrics-port/)
    // Without prom-client installed: the package to install, named.
    const missing = await spawnFerry(t, [...work, '--metrics-port', '0'], {
      env: { NODE_OPTIONS: `--require ${join(REPO_ROOT, 'tests', 'support', 'without-prom-client.cjs')}` },
    }).waitForExit(20_000)
    assert.equal(missing.code, 2, missing.stderr)
    assert.match(
      missing.stderr,
      /^ferry: .*needs the package prom-client, which is not installed: npm install prom-client, or leave .+ off \[missing_peer_dependency\]\n$/,
    )
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    t.after(() => taken.close())
    const { port } = taken.address() as { port: number }
    await refused(
      ['--metrics-port', String(port)],
      new RegExp(`--metrics-port: cannot listen on 127.0.0.1:${port} \\(EADDRINUSE\\)`),
    )
  })
})
