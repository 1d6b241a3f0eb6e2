import type { JobHandlers, PayloadOf } from '../core/handler.js'
import { DEFAULT_MAX_PAYLOAD_BYTES, type NewJob } from '../core/job.js'
import { ValidationError } from '../core/errors.js'
import { TickBatcher } from '../core/tick-batcher.js'
import { assertInteger, normalizeJob, withFieldPrefix, type EnqueueOptions } from '../core/validate.js'
import { assertKnownKeys, optionKeys } from '../core/option-keys.js'
import type { CallerTransaction, EnqueueResult, Store } from '../store/store.js'
import { transactionRefused } from '../store/params.js'
import { EnqueueSpans } from '../tracing/enqueue-spans.js'
import { openTracing } from '../tracing/open-tracing.js'
import type { TracingOption } from '../tracing/tracing-option.js'
import { publishJobEvents } from '../store/events/publish-events.js'
import { checkWaitForOptions, waitForJob, type WaitForOptions } from './wait-for.js'
import type { JobId } from '../core/job.js'

/**
 * What a job adds to an enqueue call beyond its payload, names and unique key: the numbers,
 * separators and the protocol's framing (on Redis: 40-70 bytes of meta and length prefixes).
 */
const JOB_ENCODING_BYTES = 96

/** A trace context's share of a job's meta: its traceparent (55 characters) and the JSON around it. */
const TRACE_ENCODING_BYTES = 80

/** About how many bytes a job adds to an enqueue call (capabilities.enqueueBatch weighs jobs so). */
function encodedBytesOf(job: NewJob): number {
  return (
    Buffer.byteLength(job.payload, 'utf8') +
    job.queue.length +
    job.name.length +
    (job.uniqueKey === null ? 0 : Buffer.byteLength(job.uniqueKey, 'utf8')) +
    (job.backoff === null ? 0 : JSON.stringify(job.backoff).length) +
    (job.trace == null ? 0 : TRACE_ENCODING_BYTES + (job.trace.tracestate?.length ?? 0)) +
    JOB_ENCODING_BYTES
  )
}

export interface ClientOptions {
  store: Store
  /** Largest payload accepted, in bytes of JSON. Default 1 MiB. */
  maxPayloadBytes?: number
  /**
   * Whether each enqueue makes an OpenTelemetry span and its jobs carry its context
   * (docs/tracing.md). Default: on when `@opentelemetry/api` is installed, unless FERRY_TRACING=off.
   */
  tracing?: TracingOption
}

const CLIENT_OPTION_KEYS = optionKeys<ClientOptions>({ store: true, maxPayloadBytes: true, tracing: true })

/** Where an enqueue is written. */
export interface TransactionOption {
  /**
   * A transaction of your own (stores with `capabilities.transactionalEnqueue`; for PostgreSQL, the
   * pg Client or PoolClient running your BEGIN … COMMIT): the job exists if and only if it commits.
   * Skips group commit: your transaction is the batch.
   */
  tx?: CallerTransaction
}

/** One job for enqueueMany. */
export interface JobSpec<
  Jobs extends JobHandlers = JobHandlers,
  N extends keyof Jobs & string = keyof Jobs & string,
> {
  name: N
  payload: PayloadOf<Jobs[N]>
  options?: EnqueueOptions
}

const TRANSACTION_OPTION_KEYS = optionKeys<TransactionOption>({ tx: true })
const JOB_SPEC_KEYS = optionKeys<JobSpec>({ name: true, payload: true, options: true })

/**
 * The producer API. `Jobs` is the type of a handler module's default export (see defineJobs):
 * with it, each job name only accepts the payload its handler declares.
 *
 * An enqueue resolves once its job is durably committed; enqueues issued in the same tick share
 * one commit (server stores cut a large tick's worth into a few commits that overlap:
 * capabilities.enqueueBatch, by count and by bytes). Validation runs first and a bad job rejects
 * its whole call with nothing written; so does an enqueueMany larger than the store can take in
 * one call (`maxCallBytes`), since splitting it would end its atomicity.
 */
export class Client<Jobs extends JobHandlers = JobHandlers> {
  readonly store: Store
  private readonly maxPayloadBytes: number
  /** Group commit: the enqueues issued before the event loop turns share Store.enqueue calls, so
   * transactions, fsyncs and round trips are per batch, not per job. */
  private readonly committer: TickBatcher<NewJob, EnqueueResult>
  /** Whether the store limits enqueue calls by bytes, so that jobs must be weighed (encodedBytesOf). */
  private readonly weighsJobs: boolean
  /** The send spans of enqueues; null when tracing is off. */
  private readonly enqueueSpans: EnqueueSpans | null

  constructor(options: ClientOptions) {
    assertKnownKeys(options, CLIENT_OPTION_KEYS, '')
    const { maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES } = options
    // Its enqueues are told to the store's event subscribers (docs/events.md).
    const store = publishJobEvents(options.store)
    assertInteger(maxPayloadBytes, 'maxPayloadBytes', { min: 1 })
    this.store = store
    this.maxPayloadBytes = maxPayloadBytes
    const tracing = openTracing(options.tracing, 'tracing')
    this.enqueueSpans = tracing === null ? null : new EnqueueSpans(tracing)
    const limits = store.capabilities.enqueueBatch
    this.weighsJobs = Number.isFinite(limits.maxBytes) || Number.isFinite(limits.maxCallBytes)
    // A caller that awaits each enqueue has its next one committed without waiting for the event
    // loop to turn, for up to a millisecond of such commits in a row (TickBatcher).
    this.committer = new TickBatcher((jobs) => store.enqueue({ jobs }), { ...limits, followUpWindowMs: 1 })
  }

  enqueue<N extends keyof Jobs & string>(
    name: N,
    payload: PayloadOf<Jobs[N]>,
    options?: EnqueueOptions & TransactionOption,
  ): Promise<EnqueueResult> {
    let job: NewJob
    let tx: CallerTransaction | undefined
    try {
      let jobOptions: EnqueueOptions | undefined = options
      if (options != null && typeof options === 'object' && 'tx' in options) {
        ;({ tx, ...jobOptions } = options)
      }
      job = normalizeJob(name, payload, jobOptions, { maxPayloadBytes: this.maxPayloadBytes })
      const { enqueueSpans } = this
      if (enqueueSpans === null) return this.submit(job, tx)
      return enqueueSpans.send([job], false, () => this.submit(job, tx))
    } catch (error) {
      return Promise.reject(error)
    }
  }

  /** Writes one valid job: in the caller's transaction, or by group commit. */
  private submit(job: NewJob, tx: CallerTransaction | undefined): Promise<EnqueueResult> {
    if (tx != null) return this.enqueueInTransaction(tx, [job]).then(([result]) => result!)
    if (!this.weighsJobs) return this.committer.submit(job)
    const bytes = encodedBytesOf(job)
    this.assertFitsOneCall(bytes, 1, 'payload')
    return this.committer.submit(job, bytes)
  }

  /** Enqueues every job or none (atomic); results are in input order. */
  async enqueueMany(
    jobs: readonly JobSpec<Jobs>[],
    options: TransactionOption = {},
  ): Promise<EnqueueResult[]> {
    if (!Array.isArray(jobs)) throw new ValidationError('invalid_option', 'jobs', 'must be an array')
    assertKnownKeys(options, TRANSACTION_OPTION_KEYS, '')
    const { tx } = options
    if (jobs.length === 0) return []
    const normalized: NewJob[] = new Array(jobs.length)
    for (let i = 0; i < jobs.length; i++) {
      const spec = jobs[i]
      if (typeof spec !== 'object' || spec === null) {
        throw new ValidationError(
          'invalid_option',
          `jobs[${i}]`,
          'must be an object { name, payload, options? }',
        )
      }
      try {
        // A misspelt `options` would enqueue the job with every default.
        assertKnownKeys(spec, JOB_SPEC_KEYS, '')
        normalized[i] = normalizeJob(spec.name, spec.payload, spec.options, {
          maxPayloadBytes: this.maxPayloadBytes,
        })
      } catch (error) {
        // The job's path is written only for a bad one: a bulk enqueue's first call runs cold,
        // where a string built for every job in case it is bad costs.
        throw error instanceof ValidationError ? withFieldPrefix(error, `jobs[${i}]`) : error
      }
    }
    const { enqueueSpans } = this
    if (enqueueSpans === null) return this.submitMany(normalized, tx)
    return enqueueSpans.send(normalized, true, () => this.submitMany(normalized, tx))
  }

  /** Writes valid jobs, all or none: in the caller's transaction, or by group commit. */
  private submitMany(jobs: NewJob[], tx: CallerTransaction | undefined): Promise<EnqueueResult[]> {
    if (tx != null) return this.enqueueInTransaction(tx, jobs)
    if (!this.weighsJobs) return this.committer.submitMany(jobs)
    let bytes = 0
    for (const job of jobs) bytes += encodedBytesOf(job)
    this.assertFitsOneCall(bytes, jobs.length, 'jobs')
    return this.committer.submitMany(jobs, bytes)
  }

  /** Refuses, before anything is written, what the store cannot take in one (atomic) call. */
  private assertFitsOneCall(bytes: number, count: number, field: string): void {
    const { maxCallBytes } = this.store.capabilities.enqueueBatch
    if (bytes <= maxCallBytes) return
    throw new ValidationError(
      'payload_too_large',
      field,
      `${count === 1 ? 'this job is' : `these ${count} jobs are`} about ${bytes} bytes to enqueue, over the ${this.store.kind} store's limit of ${maxCallBytes} bytes for one atomic enqueue${count === 1 ? '' : ': enqueue them in smaller batches'}`,
    )
  }

  private enqueueInTransaction(tx: CallerTransaction, jobs: NewJob[]): Promise<EnqueueResult[]> {
    const { store } = this
    // Refused here too, before group commit could have joined it to other callers' jobs.
    if (!store.capabilities.transactionalEnqueue) throw transactionRefused(store.kind)
    return store.enqueue({ jobs, tx })
  }

  /**
   * Waits for a job's result (docs/events.md): resolves with what its handler returned once it
   * completes; rejects with JobWaitError when it ends dead ('job_dead', with its JobError),
   * cancelled ('job_cancelled') or expired ('job_expired'), when it is gone ('job_removed'), or
   * when the timeout ('wait_timeout') or the signal ('wait_aborted') ends the wait first. A
   * timeoutMs or a signal is required. A convenience for scripts and tests, not for a request
   * path: a web request that waits for a job holds its connection as long as the job runs.
   */
  waitFor(id: JobId, options: WaitForOptions): Promise<unknown> {
    return waitForJob(this.store, id, options)
  }

  /**
   * Enqueues a job and waits for its result, as enqueue then waitFor (options: enqueue's, and
   * waitFor's timeoutMs and signal). A job that finishes before the wait begins is found finished
   * by its first read. A unique key that finds its job already there waits for that job.
   */
  async enqueueAndWait<N extends keyof Jobs & string>(
    name: N,
    payload: PayloadOf<Jobs[N]>,
    options: EnqueueOptions & WaitForOptions,
  ): Promise<unknown> {
    const { timeoutMs, signal, ...enqueueOptions } = options ?? {}
    checkWaitForOptions({ timeoutMs, signal })
    const { id } = await this.enqueue(name, payload, enqueueOptions)
    return this.waitFor(id, { timeoutMs, signal })
  }

  /** Waits for enqueues in flight; does not close the store (the caller owns it). */
  async close(): Promise<void> {
    await this.committer.drain()
  }
}

export function createClient<Jobs extends JobHandlers = JobHandlers>(options: ClientOptions): Client<Jobs> {
  return new Client<Jobs>(options)
}
