/**
 * Ferry's Prometheus metrics, registered in the application's prom-client registry: counters and
 * histograms fed by workers' events and by the store's instrumentation seam (wrapStore), gauges
 * read from the store's stats in the background (stats-poller.ts). Names follow Prometheus's
 * conventions (base units, `_total` counters) and labels stay few: queue, job name, state, store
 * operation, never ids. docs/metrics.md lists them.
 */
import type { Counter, Gauge, Histogram } from 'prom-client'

import { assertInteger } from '../core/validate.js'
import { assertKnownKeys, optionKeys } from '../core/option-keys.js'
import type { ClaimedJob } from '../core/job.js'
import { STORE_METHODS, type Store, type StoreMethod } from '../store/store.js'
import { wrapStore } from '../store/wrap-store.js'
import type { Worker } from '../worker/worker.js'
import { loadPromClient, type PromClient } from './prom-client.js'
import { StatsPoller } from './stats-poller.js'

/**
 * The parts of a prom-client Registry Ferry uses, so that Ferry's types do not name the optional
 * package: any prom-client 15 `Registry` (or its global `register`) fits.
 */
export interface MetricsRegistry {
  registerMetric(metric: never): void
  removeSingleMetric(name: string): void
  metrics(): Promise<string>
  readonly contentType: string
}

export interface FerryMetricsOptions {
  /** The prom-client Registry to register in. Default: prom-client's global `register`. */
  registry?: MetricsRegistry
  /** The store whose stats feed the gauges of jobs by queue and state and of queue latency. */
  store?: Store
  /** A worker whose events feed the job counters and histograms (more with observeWorker). */
  worker?: Worker
  /** How often the gauges' stats are read again while scraped, in ms. Default 15,000. */
  statsIntervalMs?: number
}

const OPTION_KEYS = optionKeys<FerryMetricsOptions>({
  registry: true,
  store: true,
  worker: true,
  statsIntervalMs: true,
})

export const DEFAULT_STATS_INTERVAL_MS = 15_000

export interface FerryMetrics {
  readonly registry: MetricsRegistry
  /** Counts the worker's jobs and times their runs and waits, until it stops or close(). */
  observeWorker(worker: Worker): void
  /**
   * The store with its calls timed (ferry_store_operation_duration_seconds) and the jobs it
   * enqueues counted: give this one to the Worker and the Client.
   */
  instrumentStore(store: Store): Store
  /** Stops the stats polling and the workers' listeners, and removes Ferry's metrics from the registry. */
  close(): void
}

/** Seconds, for run and wait times: from a millisecond to an hour. */
const JOB_SECONDS_BUCKETS = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600,
]
/** Seconds, for store calls: from 100 µs to 10 s. */
const STORE_SECONDS_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10,
]
/** The gauge's states, in the order stats give them. */
const STATES = ['scheduled', 'ready', 'active', 'completed', 'dead'] as const
/** Not timed: it waits for work by design, so its time says nothing about the store. */
const UNTIMED: readonly StoreMethod[] = ['waitForWork']

/**
 * Registers Ferry's metrics in a prom-client registry (loading prom-client, an optional peer; a
 * MissingPeerDependencyError when it is not installed). Register once per registry: prom-client
 * refuses a second metric of the same name.
 */
export function registerFerryMetrics(options: FerryMetricsOptions = {}): FerryMetrics {
  assertKnownKeys(options, OPTION_KEYS, '')
  const { store, worker, statsIntervalMs = DEFAULT_STATS_INTERVAL_MS } = options
  assertInteger(statsIntervalMs, 'statsIntervalMs', { min: 100 })
  const prom = loadPromClient()
  const registry = options.registry ?? prom.register
  const metrics = new MetricSet(prom, registry)
  const workers = new Set<Worker>()
  const detachers: (() => void)[] = []
  const poller =
    store === undefined ? null : new StatsPoller(store, statsIntervalMs, () => metrics.statsErrors.inc())
  if (poller !== null) defineStoreGauges(metrics, poller)
  metrics.gauge('ferry_worker_active_jobs', 'Jobs running now in the observed workers.', [], function () {
    this.set([...workers].reduce((sum, w) => sum + w.activeCount, 0))
  })
  metrics.gauge('ferry_worker_concurrency', 'Jobs the observed workers may run at once.', [], function () {
    this.set([...workers].reduce((sum, w) => sum + w.concurrency, 0))
  })

  const ferryMetrics: FerryMetrics = {
    registry,
    observeWorker(observed) {
      if (workers.has(observed)) return
      workers.add(observed)
      detachers.push(observeJobs(metrics, observed))
      const forget = () => workers.delete(observed)
      observed.once('worker:stopped', forget)
      detachers.push(() => {
        forget()
        observed.off('worker:stopped', forget)
      })
    },
    instrumentStore: (wrapped) => instrumentStore(metrics, wrapped),
    close() {
      poller?.close()
      for (const detach of detachers.splice(0)) detach()
      for (const name of metrics.names) registry.removeSingleMetric(name)
    },
  }
  if (worker !== undefined) ferryMetrics.observeWorker(worker)
  return ferryMetrics
}

/** Makes metrics with the prom-client that was loaded, registered in one registry, and keeps their names. */
class MetricMaker {
  readonly names: string[] = []

  constructor(
    private readonly prom: PromClient,
    private readonly registry: MetricsRegistry,
  ) {}

  gauge(
    name: string,
    help: string,
    labelNames: readonly string[],
    collect: (this: Gauge) => void | Promise<void>,
  ): Gauge {
    this.names.push(name)
    return new this.prom.Gauge({ name, help, labelNames, registers: [this.registry as never], collect })
  }

  protected counter(name: string, help: string): Counter<'queue' | 'name'> {
    this.names.push(name)
    return new this.prom.Counter({
      name,
      help,
      labelNames: ['queue', 'name'],
      registers: [this.registry as never],
    })
  }

  protected plainCounter(name: string, help: string): Counter {
    this.names.push(name)
    return new this.prom.Counter({ name, help, registers: [this.registry as never] })
  }

  protected histogram<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    buckets: number[],
  ): Histogram<L> {
    this.names.push(name)
    return new this.prom.Histogram({ name, help, labelNames, buckets, registers: [this.registry as never] })
  }
}

/** Ferry's metrics in one registry. */
class MetricSet extends MetricMaker {
  readonly enqueued = this.counter(
    'ferry_jobs_enqueued_total',
    'Jobs enqueued (new jobs, not unique-key repeats).',
  )
  readonly started = this.counter('ferry_jobs_started_total', 'Attempts started.')
  readonly completed = this.counter('ferry_jobs_completed_total', 'Jobs completed.')
  readonly failed = this.counter('ferry_jobs_failed_total', 'Attempts failed (retried or dead).')
  readonly retried = this.counter('ferry_jobs_retried_total', 'Attempts failed with another one to come.')
  readonly dead = this.counter('ferry_jobs_dead_total', 'Jobs dead after an attempt failed with none left.')
  readonly snoozed = this.counter('ferry_jobs_snoozed_total', 'Attempts that snoozed the job.')
  readonly leaseLost = this.counter(
    'ferry_jobs_lease_lost_total',
    'Attempts whose lease was lost (cancelled, or expired and recovered).',
  )
  readonly runSeconds = this.histogram(
    'ferry_job_run_duration_seconds',
    'Time from the start of an attempt to its outcome.',
    ['queue', 'name'],
    JOB_SECONDS_BUCKETS,
  )
  readonly waitSeconds = this.histogram(
    'ferry_job_wait_duration_seconds',
    'Time from the run time of a job (runAt) to the start of its attempt.',
    ['queue', 'name'],
    JOB_SECONDS_BUCKETS,
  )
  readonly storeSeconds = this.histogram(
    'ferry_store_operation_duration_seconds',
    'Time of store calls, by the Store method called (waitForWork left out).',
    ['operation'],
    STORE_SECONDS_BUCKETS,
  )
  readonly statsErrors = this.plainCounter(
    'ferry_stats_errors_total',
    'Reads of the store stats that failed.',
  )
}

/** The gauges read from the store's stats: jobs by queue and state, queue latency, the reading's age. */
function defineStoreGauges(metrics: MetricSet, poller: StatsPoller): void {
  metrics.gauge(
    'ferry_jobs',
    'Jobs by queue and state, as of the last stats reading.',
    ['queue', 'state'],
    async function () {
      const reading = await poller.latest()
      this.reset()
      for (const queue of reading?.stats ?? [])
        for (const state of STATES) this.set({ queue: queue.queue, state }, queue[state])
    },
  )
  metrics.gauge(
    'ferry_queue_latency_seconds',
    'Age of the oldest ready job of each queue (0 when none is ready), as of the last stats reading.',
    ['queue'],
    async function () {
      const reading = await poller.latest()
      this.reset()
      for (const queue of reading?.stats ?? []) {
        const ageMs = queue.oldestReadyAt === null ? 0 : Math.max(0, reading!.readAt - queue.oldestReadyAt)
        this.set({ queue: queue.queue }, ageMs / 1000)
      }
    },
  )
  metrics.gauge(
    'ferry_stats_age_seconds',
    'How old the stats reading behind the job gauges is.',
    [],
    async function () {
      const reading = await poller.latest()
      if (reading === null) this.reset()
      else this.set((Date.now() - reading.readAt) / 1000)
    },
  )
}

/** Counts a worker's jobs by their events, and times their runs; returns what detaches it. */
function observeJobs(metrics: MetricSet, worker: Worker): () => void {
  // Keyed by the job object the events carry, so that a job whose outcome never comes (its
  // settle gave up on a locked row) leaves nothing behind.
  const startedAt = new WeakMap<ClaimedJob, number>()
  const labels = (job: ClaimedJob) => ({ queue: job.queue, name: job.name })
  const ran = (job: ClaimedJob) => {
    const started = startedAt.get(job)
    if (started === undefined) return
    startedAt.delete(job)
    metrics.runSeconds.observe(labels(job), (performance.now() - started) / 1000)
  }
  const listeners = {
    'job:claimed': (job: ClaimedJob) => {
      startedAt.set(job, performance.now())
      metrics.started.inc(labels(job))
      metrics.waitSeconds.observe(labels(job), Math.max(0, Date.now() - job.runAt) / 1000)
    },
    'job:completed': (job: ClaimedJob) => {
      ran(job)
      metrics.completed.inc(labels(job))
    },
    'job:failed': (job: ClaimedJob) => {
      ran(job)
      metrics.failed.inc(labels(job))
      metrics.retried.inc(labels(job))
    },
    'job:dead': (job: ClaimedJob) => {
      ran(job)
      metrics.failed.inc(labels(job))
      metrics.dead.inc(labels(job))
    },
    'job:snoozed': (job: ClaimedJob) => {
      ran(job)
      metrics.snoozed.inc(labels(job))
    },
    'job:lease-lost': (job: ClaimedJob) => {
      startedAt.delete(job)
      metrics.leaseLost.inc(labels(job))
    },
  } as const
  for (const [event, listener] of Object.entries(listeners)) worker.on(event as 'job:claimed', listener)
  return () => {
    for (const [event, listener] of Object.entries(listeners)) worker.off(event as 'job:claimed', listener)
  }
}

/** The store with its calls timed and its new jobs counted (by the instrumentation seam). */
function instrumentStore(metrics: MetricSet, store: Store): Store {
  const timers = new Map<StoreMethod, ReturnType<typeof metrics.storeSeconds.labels>>()
  for (const method of STORE_METHODS)
    if (!UNTIMED.includes(method)) timers.set(method, metrics.storeSeconds.labels({ operation: method }))
  return wrapStore(store, {
    async around(call) {
      const timer = timers.get(call.method)
      if (timer === undefined) return call.next()
      const end = timer.startTimer()
      const result = await call.next().finally(end)
      if (call.method === 'enqueue') {
        const { jobs } = call.params
        ;(result as Awaited<ReturnType<Store['enqueue']>>).forEach(({ created }, i) => {
          if (created) metrics.enqueued.inc({ queue: jobs[i]!.queue, name: jobs[i]!.name })
        })
      }
      return result
    },
  })
}
