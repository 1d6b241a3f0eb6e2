/**
 * The dashboard's handler, request by request, on a real SQLite file: its pages and JSON API, and
 * each access rule (token, sign-in, CSRF, cross-site, read-only, CSP, escaping). The browser tests
 * (browser.test.ts) drive the same pages through Chromium on every store.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, test, type TestContext } from 'node:test'

import { getRequestListener } from '@hono/node-server'
import { Hono } from 'hono'

import { cancelJobs, createClient, type Store } from '../../src/index.js'
import { createDashboard, type DashboardOptions } from '../../src/dashboard/index.js'
import { tempStore } from '../support/sqlite-harness.js'
import { getExistingJob } from '../support/store-calls.js'

const TOKEN = 'a-dashboard-token-for-tests'
const ORIGIN = 'http://127.0.0.1:8080'

async function setup(t: TestContext, options: Omit<DashboardOptions, 'store'> = {}) {
  const { store } = await tempStore(t)
  const client = createClient({ store })
  const dashboard = createDashboard({ store, ...options })
  const request = (path: string, init: RequestInit = {}) =>
    dashboard.fetch(new Request(`${ORIGIN}${path}`, init))
  return { store, client, dashboard, request }
}

/** A job that ended dead, by cancelling it (no worker needed). */
async function deadJob(store: Store, client: ReturnType<typeof createClient>, queue = 'mail') {
  const { id } = await client.enqueue('send', { to: 'ada' }, { queue })
  await cancelJobs(store, { ids: [id] })
  return id
}

async function csrfOf(
  request: (path: string, init?: RequestInit) => Promise<Response>,
  headers: Record<string, string> = {},
) {
  const session = (await (await request('/api/session', { headers })).json()) as { csrfToken: string }
  return session.csrfToken
}

describe('the dashboard without a token (loopback)', () => {
  test('answers /healthz, the overview as HTML, and the overview as JSON', async (t) => {
    const { client, request } = await setup(t)
    await client.enqueue('send', null, { queue: 'mail' })
    const health = await request('/healthz')
    assert.equal(health.status, 200)
    assert.equal(await health.text(), 'ok')
    const page = await request('/')
    assert.equal(page.status, 200)
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
    assert.match(await page.text(), /<tr data-queue="mail">/)
    const overview = (await (await request('/api/overview')).json()) as {
      queues: { queue: string; ready: number }[]
    }
    assert.deepEqual(
      overview.queues.map(({ queue, ready }) => ({ queue, ready })),
      [{ queue: 'mail', ready: 1 }],
    )
  })

  test('answers the workers registry and the throughput counters as JSON', async (t) => {
    const { store, request } = await setup(t)
    const minute = Math.floor(Date.now() / 60_000) * 60_000
    await store.heartbeat({
      worker: {
        workerId: 'host-1:42:abc',
        host: 'host-1',
        pid: 42,
        queues: ['mail'],
        concurrency: 4,
        strategy: 'inline',
        startedAt: Date.now(),
        jobs: [],
        activeCount: 0,
      },
      counts: [{ minute, queue: 'mail', completed: 7, failed: 2 }],
      ttlMs: 15_000,
    })
    const workers = (await (await request('/api/workers')).json()) as {
      workers: { host: string; pid: number }[]
    }
    assert.deepEqual(
      workers.workers.map(({ host, pid }) => ({ host, pid })),
      [{ host: 'host-1', pid: 42 }],
    )
    const throughput = (await (await request(`/api/throughput?since=${minute}`)).json()) as {
      counts: { queue: string; completed: number; failed: number }[]
    }
    assert.deepEqual(
      throughput.counts.map(({ queue, completed, failed }) => ({ queue, completed, failed })),
      [{ queue: 'mail', completed: 7, failed: 2 }],
    )
    assert.match(await (await request('/')).text(), /7 completed/)
    assert.match(await (await request('/workers')).text(), /<td>host-1<\/td>/)
  })

  test('sends a strict CSP and no-framing headers with every answer, pages and API alike', async (t) => {
    const { request } = await setup(t)
    for (const path of ['/', '/jobs', '/api/overview', '/healthz', '/nowhere']) {
      const response = await request(path)
      const csp = response.headers.get('content-security-policy') ?? ''
      assert.match(csp, /default-src 'none'/, path)
      assert.match(csp, /script-src 'self'/, path)
      assert.match(csp, /frame-ancestors 'none'/, path)
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, path)
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff', path)
      assert.equal(response.headers.get('x-frame-options'), 'DENY', path)
      assert.equal(response.headers.get('referrer-policy'), 'same-origin', path)
    }
  })

  test('renders a payload as text, never as markup', async (t) => {
    const { client, request } = await setup(t)
    const { id } = await client.enqueue('send', {
      html: '<script>alert(1)</script><img src=x onerror=alert(2)>',
    })
    const body = await (await request(`/jobs/${id}`)).text()
    assert.doesNotMatch(body, /<script>alert/)
    assert.doesNotMatch(body, /<img src=x/)
    assert.match(body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/)
  })

  test('a change needs the CSRF token: without it 403 and nothing changes; with it the job is retried', async (t) => {
    const { store, client, request } = await setup(t)
    const id = await deadJob(store, client)
    const refused = await request(`/api/jobs/${id}/retry`, { method: 'POST' })
    assert.equal(refused.status, 403)
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'csrf')
    const wrong = await request(`/api/jobs/${id}/retry`, {
      method: 'POST',
      headers: { 'x-ferry-csrf': 'guess' },
    })
    assert.equal(wrong.status, 403)
    assert.equal((await getExistingJob(store, id)).state, 'dead')
    const csrf = await csrfOf(request)
    const retried = await request(`/api/jobs/${id}/retry`, {
      method: 'POST',
      headers: { 'x-ferry-csrf': csrf },
    })
    assert.equal(retried.status, 200)
    assert.deepEqual(await retried.json(), { message: `job ${id} retried`, changed: 1, skipped: 0 })
    assert.equal((await getExistingJob(store, id)).state, 'ready')
  })

  test('a change sent cross-site is refused even with the CSRF token', async (t) => {
    const { store, client, request } = await setup(t)
    const id = await deadJob(store, client)
    const csrf = await csrfOf(request)
    const crossSite: Record<string, string>[] = [
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'http://attacker.example' },
      { origin: 'http://127.0.0.1:9999' },
    ]
    for (const headers of crossSite) {
      const response = await request(`/api/jobs/${id}/retry`, {
        method: 'POST',
        headers: { 'x-ferry-csrf': csrf, ...headers },
      })
      assert.equal(response.status, 403, JSON.stringify(headers))
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'cross_site')
    }
    assert.equal((await getExistingJob(store, id)).state, 'dead')
    const sameOrigin = await request(`/api/jobs/${id}/retry`, {
      method: 'POST',
      headers: { 'x-ferry-csrf': csrf, origin: ORIGIN, 'sec-fetch-site': 'same-origin' },
    })
    assert.equal(sameOrigin.status, 200)
  })

  test('a form post carries the CSRF token in a field and comes back to its page with a notice', async (t) => {
    const { store, client, request } = await setup(t)
    const id = await deadJob(store, client)
    const csrf = await csrfOf(request)
    const response = await request(`/api/jobs/${id}/retry`, {
      method: 'POST',
      body: new URLSearchParams({ _csrf: csrf, _return: `/jobs/${id}` }),
      redirect: 'manual',
    })
    assert.equal(response.status, 303)
    assert.equal(response.headers.get('location'), `/jobs/${id}?notice=job+${id}+retried`)
    assert.equal((await getExistingJob(store, id)).state, 'ready')
    // A return path off the dashboard is not followed.
    const elsewhere = await request(`/api/jobs/${id}/cancel`, {
      method: 'POST',
      body: new URLSearchParams({ _csrf: csrf, _return: '//attacker.example/' }),
      redirect: 'manual',
    })
    assert.match(elsewhere.headers.get('location') ?? '', /^\/\?notice=/)
  })

  test('bulk actions apply to the selected jobs and skip those in another state', async (t) => {
    const { store, client, request } = await setup(t)
    const dead = [await deadJob(store, client), await deadJob(store, client)]
    const { id: ready } = await client.enqueue('send', null, { queue: 'mail', delayMs: 60_000 })
    const csrf = await csrfOf(request)
    const body = new URLSearchParams({ _csrf: csrf, action: 'retry' })
    for (const id of [...dead, ready]) body.append('ids', id)
    const response = await request('/api/jobs/bulk', { method: 'POST', body, redirect: 'manual' })
    assert.equal(response.status, 303)
    const notice = new URL(response.headers.get('location')!, ORIGIN).searchParams.get('notice')
    assert.match(notice ?? '', /^2 of 3 jobs retried \(1 skipped/)
    for (const id of dead) assert.equal((await getExistingJob(store, id)).state, 'ready')
    const runNow = await request('/api/jobs/bulk', {
      method: 'POST',
      headers: { 'x-ferry-csrf': csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'run-now', ids: [ready] }),
    })
    assert.deepEqual(await runNow.json(), { message: `job ${ready} made ready`, changed: 1, skipped: 0 })
    assert.equal((await getExistingJob(store, ready)).state, 'ready')
  })

  test('filters the job list by name and unique key, and deletes a job that is not running', async (t) => {
    const { store, client, request } = await setup(t)
    const { id: report } = await client.enqueue('report', null, { queue: 'mail', uniqueKey: 'report-7' })
    await client.enqueue('send', null, { queue: 'mail' })
    const byName = await (await request('/jobs?name=report')).text()
    assert.match(byName, new RegExp(`data-job="${report}"`))
    assert.doesNotMatch(byName, /<td>send<\/td>/)
    const byKey = (await (await request('/api/jobs?uniqueKey=report-7')).json()) as { jobs: { id: string }[] }
    assert.deepEqual(
      byKey.jobs.map((job) => job.id),
      [report],
    )
    const headers = { 'x-ferry-csrf': await csrfOf(request) }
    const deleted = await request(`/api/jobs/${report}/delete`, { method: 'POST', headers })
    assert.equal(deleted.status, 200)
    assert.equal((await store.listJobs({ ids: [report] })).jobs.length, 0)
    assert.equal((await request(`/api/jobs/${report}/delete`, { method: 'POST', headers })).status, 404)
  })

  test('a bulk action on all matching runs in the background, a batch at a time, and reports its progress', async (t) => {
    const { store, client, request } = await setup(t)
    const ids: string[] = []
    for (let i = 0; i < 30; i++) ids.push(await deadJob(store, client, i % 3 === 0 ? 'reports' : 'mail'))
    const headers = { 'x-ferry-csrf': await csrfOf(request), 'content-type': 'application/json' }
    const started = await request('/api/jobs/bulk', {
      method: 'POST',
      headers,
      body: JSON.stringify({ action: 'retry', scope: 'all', filter: { queue: 'mail', state: 'dead' } }),
    })
    assert.equal(started.status, 202)
    const { operation } = (await started.json()) as { operation: { id: string; title: string } }
    assert.match(operation.title, /^retried: every one of the dead jobs of mail$/)
    let status = 'running'
    let progress = { matched: 0, changed: 0 }
    while (status === 'running') {
      await new Promise((resolve) => setTimeout(resolve, 20))
      const read = (await (await request(`/api/operations/${operation.id}`)).json()) as {
        operation: { status: string; progress: typeof progress }
      }
      ;({ status, progress } = read.operation)
    }
    assert.equal(status, 'done')
    assert.equal(progress.matched, 20)
    assert.equal(progress.changed, 20)
    const states = await Promise.all(ids.map(async (id) => (await getExistingJob(store, id)).state))
    assert.equal(states.filter((state) => state === 'ready').length, 20)
    assert.equal(states.filter((state) => state === 'dead').length, 10)
    assert.match(await (await request('/jobs')).text(), /retried: every one of the dead jobs of mail/)
    const badFilter = await request('/api/jobs/bulk', {
      method: 'POST',
      headers,
      body: JSON.stringify({ action: 'retry', scope: 'all', filter: { state: 'gone' } }),
    })
    assert.equal(badFilter.status, 400)
  })

  test('bad input is a 400 naming the field; a job that cannot take the action is a 409; none is a 404', async (t) => {
    const { client, request } = await setup(t)
    const csrf = await csrfOf(request)
    const headers = { 'x-ferry-csrf': csrf, 'content-type': 'application/json' }
    const { id } = await client.enqueue('send', null)
    const priority = await request(`/api/jobs/${id}/priority`, {
      method: 'POST',
      headers,
      body: '{"priority":"high"}',
    })
    assert.equal(priority.status, 400)
    assert.equal(((await priority.json()) as { error: { field: string } }).error.field, 'priority')
    const badId = await request('/api/jobs/abc')
    assert.equal(badId.status, 400)
    const missing = await request('/api/jobs/999999')
    assert.equal(missing.status, 404)
    const notDead = await request(`/api/jobs/${id}/retry`, { method: 'POST', headers })
    assert.equal(notDead.status, 409)
    const unknown = await request(`/api/jobs/${id}/explode`, { method: 'POST', headers })
    assert.equal(unknown.status, 400)
    const state = await request('/api/jobs?state=finished')
    assert.equal(state.status, 400)
  })

  test('pauses and resumes a queue, and saves its limits', async (t) => {
    const { store, request } = await setup(t)
    const headers = { 'x-ferry-csrf': await csrfOf(request), 'content-type': 'application/json' }
    const paused = await request('/api/queues/mail/pause', {
      method: 'POST',
      headers,
      body: '{"reason":"provider down"}',
    })
    assert.equal(paused.status, 200)
    const [control] = (await store.control()).queues
    assert.equal(control?.paused?.reason, 'provider down')
    assert.equal(control?.paused?.by, 'dashboard')
    await request('/api/queues/mail/resume', { method: 'POST', headers })
    assert.equal((await store.control()).queues.find((q) => q.queue === 'mail')?.paused ?? null, null)
    const limits = await request('/api/queues/mail/limits', {
      method: 'POST',
      headers,
      body: JSON.stringify({ concurrency: '3', rateLimit: '10', ratePerMs: '1000' }),
    })
    assert.equal(limits.status, 200)
    const saved = (await store.control()).queues.find((q) => q.queue === 'mail')
    assert.deepEqual(saved?.limits, {
      concurrency: 3,
      rate: { limit: 10, perMs: 1000 },
      groupConcurrency: null,
      groupRate: null,
    })
    const half = await request('/api/queues/mail/limits', {
      method: 'POST',
      headers,
      body: '{"rateLimit":"10"}',
    })
    assert.equal(half.status, 400)
  })
})

describe('the dashboard with a token', () => {
  test('sends a browser to sign in, and answers the API 401 without the token', async (t) => {
    const { request } = await setup(t, { token: TOKEN })
    const page = await request('/', { redirect: 'manual' })
    assert.equal(page.status, 303)
    assert.equal(page.headers.get('location'), '/login')
    assert.equal((await request('/api/overview')).status, 401)
    assert.equal((await request('/api/overview', { headers: { authorization: 'Bearer wrong' } })).status, 401)
    assert.equal((await request('/healthz')).status, 200)
    assert.equal((await request('/login')).status, 200)
  })

  test('a script with the bearer token reads and changes without a CSRF token', async (t) => {
    const { store, client, request } = await setup(t, { token: TOKEN })
    const id = await deadJob(store, client)
    const headers = { authorization: `Bearer ${TOKEN}` }
    assert.equal((await request('/api/overview', { headers })).status, 200)
    const retried = await request(`/api/jobs/${id}/retry`, { method: 'POST', headers })
    assert.equal(retried.status, 200)
    assert.equal((await getExistingJob(store, id)).state, 'ready')
  })

  test('signing in sets a session cookie that opens the pages; its changes need its CSRF token; signing out ends it', async (t) => {
    const { store, client, request } = await setup(t, { token: TOKEN })
    const wrong = await request('/login', { method: 'POST', body: new URLSearchParams({ token: 'nope' }) })
    assert.equal(wrong.status, 401)
    const signIn = await request('/login', {
      method: 'POST',
      body: new URLSearchParams({ token: TOKEN }),
      redirect: 'manual',
    })
    assert.equal(signIn.status, 303)
    const setCookie = signIn.headers.get('set-cookie') ?? ''
    assert.match(setCookie, /HttpOnly/)
    assert.match(setCookie, /SameSite=Strict/)
    const cookie = setCookie.split(';')[0]!
    assert.equal((await request('/', { headers: { cookie } })).status, 200)
    const id = await deadJob(store, client)
    const noCsrf = await request(`/api/jobs/${id}/retry`, { method: 'POST', headers: { cookie } })
    assert.equal(noCsrf.status, 403)
    const csrf = await csrfOf(request, { cookie })
    const retried = await request(`/api/jobs/${id}/retry`, {
      method: 'POST',
      headers: { cookie, 'x-ferry-csrf': csrf },
    })
    assert.equal(retried.status, 200)
    assert.equal((await getExistingJob(store, id)).state, 'ready')
    const signOut = await request('/logout', {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({ _csrf: csrf }),
      redirect: 'manual',
    })
    assert.equal(signOut.status, 303)
    assert.equal((await request('/', { headers: { cookie }, redirect: 'manual' })).status, 303)
  })

  test('a sign-in posted cross-site is refused, and guessing is slowed after ten wrong tokens a minute', async (t) => {
    const { request } = await setup(t, { token: TOKEN })
    const crossSite = await request('/login', {
      method: 'POST',
      headers: { 'sec-fetch-site': 'cross-site' },
      body: new URLSearchParams({ token: TOKEN }),
    })
    assert.equal(crossSite.status, 403)
    for (let i = 0; i < 10; i++) {
      const response = await request('/login', {
        method: 'POST',
        body: new URLSearchParams({ token: `guess-${i}` }),
      })
      assert.equal(response.status, 401)
    }
    const limited = await request('/login', { method: 'POST', body: new URLSearchParams({ token: TOKEN }) })
    assert.equal(limited.status, 429)
  })
})

describe('the dashboard read-only', () => {
  test('shows the pages without action buttons and refuses every change with 403', async (t) => {
    const { store, client, request } = await setup(t, { readOnly: true })
    const id = await deadJob(store, client)
    const page = await (await request(`/jobs/${id}`)).text()
    assert.doesNotMatch(page, /action="\/api\/jobs\/\d+\/retry"/)
    assert.match(page, /read-only/)
    const csrf = await csrfOf(request)
    for (const path of [`/api/jobs/${id}/retry`, '/api/queues/mail/pause', '/api/jobs/bulk']) {
      const response = await request(path, { method: 'POST', headers: { 'x-ferry-csrf': csrf } })
      assert.equal(response.status, 403, path)
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'read_only')
    }
    assert.equal((await getExistingJob(store, id)).state, 'dead')
    assert.deepEqual((await store.control()).queues, [])
  })
})

describe('the dashboard mounted under a path', () => {
  test('answers under its base path and links within it', async (t) => {
    const { client, request } = await setup(t, { basePath: '/ferry' })
    await client.enqueue('send', null, { queue: 'mail' })
    const page = await request('/ferry/')
    assert.equal(page.status, 200)
    const html = await page.text()
    assert.match(html, /href="\/ferry\/jobs"/)
    assert.match(html, /src="\/ferry\/assets\/dashboard\.js\?v=/)
    assert.equal((await request('/ferry/assets/dashboard.css')).status, 200)
    assert.equal((await request('/jobs')).status, 404)
  })
})

test('mounts in a Hono app, and behind Node http through the node-server listener, forms included', async (t) => {
  const { store } = await tempStore(t)
  const client = createClient({ store })
  const id = await deadJob(store, client)
  const dashboard = createDashboard({ store, basePath: '/ferry' })
  const app = new Hono()
  app.get('/', (c) => c.text('the app'))
  app.all('/ferry/*', (c) => dashboard.fetch(c.req.raw))
  assert.equal(await (await app.request('/')).text(), 'the app')
  assert.match(await (await app.request('/ferry/jobs')).text(), /<h1>Jobs<\/h1>/)

  const server = createServer(getRequestListener(app.fetch))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const session = (await (await fetch(`${base}/ferry/api/session`)).json()) as { csrfToken: string }
  const response = await fetch(`${base}/ferry/api/jobs/${id}/retry`, {
    method: 'POST',
    body: new URLSearchParams({ _csrf: session.csrfToken, _return: `/ferry/jobs/${id}` }),
    redirect: 'manual',
  })
  assert.equal(response.status, 303)
  assert.match(response.headers.get('location') ?? '', new RegExp(`^/ferry/jobs/${id}\\?notice=`))
  assert.equal((await getExistingJob(store, id)).state, 'ready')
})
