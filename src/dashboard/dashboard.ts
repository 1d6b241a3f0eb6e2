/**
 * Ferry's dashboard as a Fetch-API handler, `(Request) => Promise<Response>`: pages rendered on the
 * server from the admin layer (src/admin), the same operations as a JSON API under /api/, and the
 * access rules of access.ts. `ferry dashboard` serves it (serve.ts); an app can mount it under a
 * path of its own (docs/dashboard.md).
 */
import { Hono, type Context } from 'hono'

import { getJob, getStats } from '../admin/inspect.js'
import { limitQueue, pauseQueue, resumeQueue } from '../admin/queue-control.js'
import { listSchedules, pauseSchedule, resumeSchedule, runScheduleNow } from '../admin/schedules.js'
import { getThroughput, listWorkers } from '../admin/workers.js'
import {
  FerryError,
  JobNotChangeableError,
  JobNotFoundError,
  ScheduleNotFoundError,
  ValidationError,
} from '../core/errors.js'
import type { QueueLimitChange, Store } from '../store/store.js'
import { Access, crossSiteReason, sameToken, SESSION_COOKIE, SESSION_MS, type Caller } from './access.js'
import { assets } from './generated/assets.js'
import {
  actOnIds,
  bulkActionOf,
  describeFilter,
  filterOf,
  JOB_ACTIONS,
  type JobActionName,
} from './job-actions.js'
import { Operations } from './operations.js'
import { SharedReading } from './shared-reading.js'
import { errorView, queueView, schedulesView, signInView } from './views/control.js'
import { jobsView, jobView } from './views/jobs.js'
import { layout, type Html, type PageContext, type PageOptions } from './views/layout.js'
import { overviewView } from './views/overview.js'
import { workersView } from './views/workers.js'

export interface DashboardOptions {
  store: Store
  /**
   * The secret that signs a browser in and that scripts send as `Authorization: Bearer`. Without
   * one, whoever reaches the dashboard may use it: serveDashboard allows that on loopback only.
   */
  token?: string | null
  /** Shows everything and changes nothing: every action answers 403. */
  readOnly?: boolean
  /** The path it is mounted under, such as '/ferry' (default: the root). */
  basePath?: string
  /** How often open pages follow the store, in ms (default 2,000). */
  refreshMs?: number
}

export interface Dashboard {
  fetch(request: Request): Promise<Response>
}

/** The headers of every answer: no framing, no sniffing, no referrer to other sites, scripts and styles from here only. */
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  // Not no-referrer: with it a browser sends its forms' Origin as "null", which is refused as cross-site.
  'Referrer-Policy': 'same-origin',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
}

type Env = { Variables: { caller: Caller } }

/** Jobs a list page shows. */
const PAGE_SIZE = 50

/** The query fields of the job list's filter form. */
const JOB_FILTER_FIELDS = ['queue', 'state', 'name', 'uniqueKey', 'within', 'payload'] as const

/** The overview's chart: the last three hours, a bar a minute. */
const CHART_SPAN_MS = 3 * 60 * 60 * 1000

export function createDashboard(options: DashboardOptions): Dashboard {
  const { store, readOnly = false, refreshMs = 2000 } = options
  const base = normalizeBasePath(options.basePath)
  const access = new Access(options.token ?? null)
  const stats = new SharedReading(() => getStats(store), Math.min(1000, refreshMs))
  const operations = new Operations(store)
  const workers = new SharedReading(() => listWorkers(store), Math.min(1000, refreshMs))
  // The chart's counters move once per worker heartbeat (5 s): no need to read them more often.
  const throughput = new SharedReading(
    () => getThroughput(store, { since: Date.now() - CHART_SPAN_MS }),
    Math.max(5000, refreshMs),
  )
  const app = new Hono<Env>({ strict: false }).basePath(base || '/')

  app.use('*', async (c, next) => {
    await next()
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(name, value)
    if (!c.req.path.startsWith(`${base}/assets/`)) c.res.headers.set('Cache-Control', 'no-store')
  })

  // ── open to all: health, static files, signing in ──────────────────────────────────────────
  app.get('/healthz', (c) => c.text('ok'))
  // Browsers ask for it at the root whatever the page; nothing to show.
  app.get('/favicon.ico', (c) => c.body(null, 204))
  app.get('/assets/:file', (c) => {
    const asset = assets[c.req.param('file')]
    if (asset === undefined) return c.text('not found', 404)
    return c.body(asset.body, 200, {
      'Content-Type': asset.type,
      'Cache-Control': 'public, max-age=31536000, immutable',
    })
  })
  app.get('/login', (c) => {
    if (!access.tokenRequired) return c.redirect(`${base}/`, 303)
    return page(c, { title: 'Sign in', section: null }, signInView(pageContext(c, null), null))
  })
  app.post('/login', async (c) => {
    if (!access.tokenRequired) return c.redirect(`${base}/`, 303)
    const crossSite = crossSiteReason(c.req.raw)
    if (crossSite !== null) return c.text(`refused: ${crossSite}`, 403)
    const body = await c.req.parseBody()
    const outcome = access.signIn(typeof body.token === 'string' ? body.token : '')
    if (outcome === 'wrong' || outcome === 'too_many') {
      const message =
        outcome === 'wrong' ? 'That token is not right.' : 'Too many wrong tokens: wait a minute.'
      const status = outcome === 'wrong' ? 401 : 429
      return page(c, { title: 'Sign in', section: null }, signInView(pageContext(c, null), message), status)
    }
    c.header('Set-Cookie', sessionCookie(c, outcome, SESSION_MS / 1000))
    return c.redirect(`${base}/`, 303)
  })

  // ── everything else: a caller, and for changes a same-site request with its CSRF token ────────
  app.use('*', async (c, next) => {
    const caller = access.callerOf(c.req.raw)
    if (caller === null) {
      if (isApi(c))
        return c.json(apiError('unauthorized', 'sign in, or send Authorization: Bearer <token>'), 401)
      return c.redirect(`${base}/login`, 303)
    }
    c.set('caller', caller)
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next()
    const crossSite = crossSiteReason(c.req.raw)
    if (crossSite !== null) return refuse(c, 'cross_site', `refused: ${crossSite}`)
    if (caller.kind === 'browser') {
      const given = c.req.header('x-ferry-csrf') ?? (await formField(c, '_csrf'))
      if (!sameToken(given, caller.csrf)) return refuse(c, 'csrf', 'refused: no valid CSRF token')
    }
    if (readOnly && !c.req.path.endsWith('/logout'))
      return refuse(c, 'read_only', 'refused: the dashboard is read-only')
    return next()
  })

  app.post('/logout', (c) => {
    const caller = c.get('caller')
    if (caller.kind === 'browser' && caller.sessionId !== null) access.signOut(caller.sessionId)
    c.header('Set-Cookie', sessionCookie(c, '', 0))
    return c.redirect(`${base}/login`, 303)
  })

  // ── pages ──────────────────────────────────────────────────────────────────────────────────
  app.get('/', async (c) => {
    const [report, chart, running] = await Promise.all([stats.get(), throughput.get(), workers.get()])
    return page(
      c,
      { title: 'Overview', section: '/', refreshMs },
      overviewView(pageContext(c), report, chart.minutes, running.workers.length),
    )
  })
  app.get('/workers', async (c) =>
    page(
      c,
      { title: 'Workers', section: '/workers', refreshMs },
      workersView(pageContext(c), await workers.get()),
    ),
  )
  app.get('/jobs', async (c) => {
    const id = c.req.query('id')?.trim()
    if (id) return c.redirect(`${base}/jobs/${encodeURIComponent(id)}`, 303)
    const filter = filterOf((name) => c.req.query(name))
    const cursor = nonEmpty(c.req.query('cursor'))
    // One store page: a filter no index answers is walked a bounded stretch at a time, so a page
    // may come short with more to follow, and never costs a walk of the whole table.
    const [result, report] = await Promise.all([
      store.listJobs({ ...filter, limit: PAGE_SIZE, ...(cursor === null ? {} : { cursor }) }),
      stats.get(),
    ])
    const form = Object.fromEntries(JOB_FILTER_FIELDS.map((name) => [name, c.req.query(name) ?? '']))
    return page(
      c,
      { title: 'Jobs', section: '/jobs', refreshMs: operations.running() ? 1000 : 0 },
      jobsView(pageContext(c), {
        form,
        queues: report.queues.map((queue) => queue.queue),
        result,
        cursor,
        payloadSearch: store.capabilities.payloadSearch,
        operations: operations.list(),
      }),
    )
  })
  app.get('/jobs/:id', async (c) => {
    const job = await getJob(store, { id: c.req.param('id') })
    if (job === null) throw new JobNotFoundError(c.req.param('id'))
    const finished = job.state === 'completed' || job.state === 'dead'
    return page(
      c,
      { title: `Job ${job.id}`, section: '/jobs', refreshMs: finished ? 0 : 1000 },
      jobView(pageContext(c), job),
    )
  })
  app.get('/queues/:queue', async (c) => {
    const name = c.req.param('queue')
    const report = await stats.get()
    const queue = report.queues.find((q) => q.queue === name)
    if (queue === undefined)
      return page(c, { title: 'Not found', section: null }, errorView(404, `no queue "${name}"`), 404)
    return page(c, { title: `Queue ${name}`, section: '/', refreshMs }, queueView(pageContext(c), queue))
  })
  app.get('/schedules', async (c) =>
    page(
      c,
      { title: 'Schedules', section: '/schedules', refreshMs },
      schedulesView(pageContext(c), await listSchedules(store)),
    ),
  )

  // ── the JSON API: what the pages' forms post to, and what scripts call ──────────────────────
  app.get('/api/session', (c) => {
    const caller = c.get('caller')
    return c.json({ readOnly, csrfToken: caller.kind === 'browser' ? caller.csrf : null })
  })
  app.get('/api/overview', async (c) => c.json(await stats.get()))
  app.get('/api/workers', async (c) => c.json(await workers.get()))
  app.get('/api/throughput', async (c) => {
    const number = (name: string) => {
      const text = c.req.query(name)
      return text === undefined ? undefined : Number(text)
    }
    const since = number('since') ?? Date.now() - CHART_SPAN_MS
    const until = number('until')
    const queue = nonEmpty(c.req.query('queue'))
    return c.json(
      await getThroughput(store, {
        since,
        ...(until === undefined ? {} : { until }),
        ...(queue === null ? {} : { queue }),
      }),
    )
  })
  app.get('/api/jobs', async (c) => {
    const cursor = nonEmpty(c.req.query('cursor'))
    const limit = c.req.query('limit')
    return c.json(
      await store.listJobs({
        ...filterOf((name) => c.req.query(name)),
        ...(cursor === null ? {} : { cursor }),
        ...(limit === undefined ? {} : { limit: Number(limit) }),
      }),
    )
  })
  app.get('/api/jobs/:id', async (c) => {
    const job = await getJob(store, { id: c.req.param('id') })
    if (job === null) throw new JobNotFoundError(c.req.param('id'))
    return c.json(job)
  })
  app.post('/api/jobs/bulk', async (c) => {
    const body = await bodyOf(c)
    const name = String(body.action ?? '')
    if (body.scope !== 'all') return done(c, await actOnIds(store, name, asIds(body.ids), body))
    // All matching: in the background, a batch at a time; the jobs page follows its progress.
    const action = bulkActionOf(name, body)
    const fields =
      typeof body.filter === 'object' && body.filter !== null
        ? (body.filter as Record<string, unknown>)
        : body
    const filter = filterOf((field) => stringOf(fields[field]))
    await store.listJobs({ ...filter, limit: 1 }) // a bad filter is refused here, before anything starts
    const title = `${JOB_ACTIONS[name as JobActionName].verb}: every one of the ${describeFilter(filter)}`
    const operation = operations.start(action, filter, title)
    stats.forget()
    if (isForm(c)) return backTo(c, `started in the background: ${title}`, false)
    return c.json({ operation }, 202)
  })
  app.get('/api/operations', (c) => c.json({ operations: operations.list() }))
  app.get('/api/operations/:id', (c) => {
    const operation = operations.get(c.req.param('id'))
    if (operation === null) return c.json(apiError('not_found', `no operation ${c.req.param('id')}`), 404)
    return c.json({ operation })
  })
  app.post('/api/operations/:id/stop', (c) => {
    if (!operations.stop(c.req.param('id'))) {
      return c.json(apiError('not_found', `no operation ${c.req.param('id')}`), 404)
    }
    return done(c, { message: 'stopping after its current batch' })
  })
  app.post('/api/jobs/:id/:action', async (c) => {
    const id = c.req.param('id')
    const outcome = await actOnIds(store, c.req.param('action'), [id], await bodyOf(c))
    if (outcome.changed === 0) {
      // One job named: say why nothing happened, as a script can act on it (404 or 409).
      const job = await getJob(store, { id })
      if (job === null) throw new JobNotFoundError(id)
      throw new JobNotChangeableError(id, job.state)
    }
    return done(c, outcome)
  })
  app.post('/api/queues/:queue/pause', async (c) => {
    const body = await bodyOf(c)
    const reason = nonEmpty(stringOf(body.reason))
    const queue = await pauseQueue(store, {
      queue: c.req.param('queue'),
      by: 'dashboard',
      ...(reason === null ? {} : { reason }),
    })
    return done(c, { queue, message: `queue ${queue.queue} paused` })
  })
  app.post('/api/queues/:queue/resume', async (c) => {
    const queue = await resumeQueue(store, { queue: c.req.param('queue') })
    return done(c, { queue, message: `queue ${queue.queue} resumed` })
  })
  app.post('/api/queues/:queue/limits', async (c) => {
    const queue = await limitQueue(store, limitsOf(c.req.param('queue'), await bodyOf(c)))
    return done(c, { queue, message: `limits of ${queue.queue} saved` })
  })
  app.get('/api/schedules', async (c) => c.json(await listSchedules(store)))
  app.post('/api/schedules/:id/:action', async (c) => {
    const id = c.req.param('id')
    const action = c.req.param('action')
    if (action === 'run') {
      const jobId = await runScheduleNow(store, id)
      return done(c, { jobId, message: `schedule ${id} ran: job ${jobId}` })
    }
    if (action === 'pause')
      return done(c, { schedule: await pauseSchedule(store, id), message: `schedule ${id} paused` })
    if (action === 'resume')
      return done(c, { schedule: await resumeSchedule(store, id), message: `schedule ${id} resumed` })
    throw new ValidationError('invalid_option', 'action', `must be run, pause or resume (got "${action}")`)
  })

  app.notFound((c) =>
    isApi(c)
      ? c.json(apiError('not_found', `no ${c.req.method} ${c.req.path}`), 404)
      : page(c, { title: 'Not found', section: null }, errorView(404, `no page at ${c.req.path}`), 404),
  )
  app.onError((error, c) => {
    const status = statusOf(error)
    const message =
      error instanceof FerryError ? error.message : 'the dashboard failed to answer: see its log'
    if (!(error instanceof FerryError)) console.error('ferry dashboard:', error)
    if (isForm(c) && c.req.method === 'POST') return backTo(c, message, true)
    if (isApi(c)) {
      const code = error instanceof FerryError ? error.code : 'internal'
      const field = error instanceof ValidationError ? error.field : undefined
      return c.json(apiError(code, message, field), status)
    }
    return page(c, { title: 'Error', section: null }, errorView(status, message), status)
  })

  /** A page, or its content alone when dashboard.js reloads it (X-Ferry-Fragment). */
  function page(
    c: Context<Env>,
    pageOptions: PageOptions,
    content: Html,
    status: 200 | 400 | 401 | 404 | 409 | 429 | 500 = 200,
  ) {
    const fragment = c.req.header('x-ferry-fragment') === '1'
    return c.html(layout(pageContext(c), pageOptions, content, fragment), status)
  }

  function pageContext(c: Context<Env>, callerOrNone: Caller | null = c.get('caller') ?? null): PageContext {
    const url = new URL(c.req.url)
    const error = url.searchParams.get('error')
    const notice = error ?? url.searchParams.get('notice')
    url.searchParams.delete('notice')
    url.searchParams.delete('error')
    return {
      base,
      readOnly,
      csrf: callerOrNone?.kind === 'browser' ? callerOrNone.csrf : null,
      signedIn: callerOrNone?.kind === 'browser' && callerOrNone.sessionId !== null,
      here: `${url.pathname}${url.search}`,
      notice: notice === null ? null : { text: notice, error: error !== null },
    }
  }

  /** After an action: JSON for a script, back to the page (with a notice) for a form. */
  function done(c: Context<Env>, result: { message: string } & Record<string, unknown>) {
    stats.forget()
    if (isForm(c)) return backTo(c, result.message, false)
    return c.json(result)
  }

  async function backTo(c: Context<Env>, message: string, error: boolean) {
    const url = new URL(await returnPath(c, base), 'http://dashboard.invalid')
    url.searchParams.set(error ? 'error' : 'notice', message)
    return c.redirect(`${url.pathname}${url.search}`, 303)
  }

  function isApi(c: Context<Env>): boolean {
    return c.req.path.startsWith(`${base}/api/`)
  }

  function refuse(c: Context<Env>, code: string, message: string) {
    return isApi(c) && !isForm(c) ? c.json(apiError(code, message), 403) : c.text(message, 403)
  }

  return { fetch: (request) => Promise.resolve(app.fetch(request)) }
}

function limitsOf(queue: string, body: Record<string, unknown>): QueueLimitChange {
  const number = (name: string): number | null => {
    const text = stringOf(body[name])?.trim() ?? ''
    if (text === '') return null
    const value = Number(text)
    if (!Number.isInteger(value) || value < 1) {
      throw new ValidationError('invalid_option', name, `must be a whole number from 1 (got "${text}")`)
    }
    return value
  }
  const rateLimit = number('rateLimit')
  const ratePerMs = number('ratePerMs')
  if ((rateLimit === null) !== (ratePerMs === null)) {
    throw new ValidationError(
      'invalid_option',
      rateLimit === null ? 'rateLimit' : 'ratePerMs',
      'a rate needs both its count and its window',
    )
  }
  return {
    queue,
    concurrency: number('concurrency'),
    rate: rateLimit === null ? null : { limit: rateLimit, perMs: ratePerMs! },
    groupConcurrency: number('groupConcurrency'),
  }
}

function statusOf(error: unknown): 400 | 404 | 409 | 500 {
  if (error instanceof JobNotFoundError || error instanceof ScheduleNotFoundError) return 404
  if (error instanceof JobNotChangeableError) return 409
  if (error instanceof ValidationError) return 400
  return 500
}

function apiError(code: string, message: string, field?: string) {
  return { error: { code, message, ...(field === undefined ? {} : { field }) } }
}

function isForm(c: Context): boolean {
  const type = c.req.header('content-type') ?? ''
  return type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/form-data')
}

/** A form's or a JSON document's fields; nothing for a body of another kind. */
async function bodyOf(c: Context): Promise<Record<string, unknown>> {
  if (isForm(c)) return c.req.parseBody({ all: true })
  if ((c.req.header('content-type') ?? '').startsWith('application/json')) {
    const text = await c.req.text()
    if (text.trim() === '') return {}
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      throw new ValidationError('invalid_option', 'body', 'is not valid JSON')
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new ValidationError('invalid_option', 'body', 'must be a JSON object')
    }
    return body as Record<string, unknown>
  }
  return {}
}

async function formField(c: Context, name: string): Promise<string | undefined> {
  if (!isForm(c)) return undefined
  const value = (await c.req.parseBody({ all: true }))[name]
  return typeof value === 'string' ? value : undefined
}

function asIds(value: unknown): string[] {
  if (value === undefined) return []
  const list = Array.isArray(value) ? value : [value]
  return list.map((id) => String(id))
}

function stringOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined
  return String(value)
}

function nonEmpty(value: string | undefined): string | null {
  return value === undefined || value.trim() === '' ? null : value
}

/** Where a form comes back to: its `_return` path when it is one of this dashboard's, else the overview. */
async function returnPath(c: Context, base: string): Promise<string> {
  const target = await formField(c, '_return')
  if (target !== undefined && target.startsWith(`${base}/`) && !target.startsWith('//')) return target
  return `${base}/`
}

function sessionCookie(c: Context, value: string, maxAgeSeconds: number): string {
  const base = new URL(c.req.url).protocol === 'https:' ? '; Secure' : ''
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${base}`
}

function normalizeBasePath(path: string | undefined): string {
  if (path === undefined || path === '' || path === '/') return ''
  if (!/^\/[A-Za-z0-9._~\-/]*$/.test(path)) {
    throw new ValidationError('invalid_option', 'basePath', `must be a path such as /ferry (got "${path}")`)
  }
  return path.replace(/\/+$/, '')
}
