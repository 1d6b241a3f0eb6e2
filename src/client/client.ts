import type { JobHandlers, PayloadOf } from '../core/handler.js'
import { DEFAULT_MAX_PAYLOAD_BYTES, type NewJob } from '../core/job.js'
import { ValidationError } from '../core/errors.js'
import { TickBatcher } from '../core/tick-batcher.js'
import { normalizeJob, type EnqueueOptions } from '../core/validate.js'
import type { CallerTransaction, EnqueueResult, Store } from '../store/store.js'

export interface ClientOptions {
  store: Store
  /** Largest payload accepted, in bytes of JSON. Default 1 MiB. */
  maxPayloadBytes?: number
}

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

/**
 * The producer API. `Jobs` is the type of a handler module's default export (see defineJobs):
 * with it, each job name only accepts the payload its handler declares.
 *
 * An enqueue resolves once its job is durably committed; enqueues issued in the same tick share
 * one commit (server stores cut a large tick's worth into a few commits that overlap:
 * capabilities.enqueueBatch). Validation runs first and a bad job rejects its whole call with
 * nothing written.
 */
export class Client<Jobs extends JobHandlers = JobHandlers> {
  readonly store: Store
  private readonly maxPayloadBytes: number
  /** Group commit: the enqueues issued before the event loop turns share Store.enqueue calls, so
   * transactions, fsyncs and round trips are per batch, not per job. */
  private readonly committer: TickBatcher<NewJob, EnqueueResult>

  constructor({ store, maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES }: ClientOptions) {
    if (!Number.isInteger(maxPayloadBytes) || maxPayloadBytes < 1) {
      throw new ValidationError('invalid_option', 'maxPayloadBytes', 'must be a positive integer')
    }
    this.store = store
    this.maxPayloadBytes = maxPayloadBytes
    this.committer = new TickBatcher((jobs) => store.enqueue({ jobs }), store.capabilities.enqueueBatch)
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
      if (tx != null) return this.enqueueInTransaction(tx, [job]).then(([result]) => result!)
    } catch (error) {
      return Promise.reject(error)
    }
    return this.committer.submit(job)
  }

  /** Enqueues every job or none (atomic); results are in input order. */
  async enqueueMany(
    jobs: readonly JobSpec<Jobs>[],
    { tx }: TransactionOption = {},
  ): Promise<EnqueueResult[]> {
    if (!Array.isArray(jobs)) throw new ValidationError('invalid_option', 'jobs', 'must be an array')
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
      normalized[i] = normalizeJob(spec.name, spec.payload, spec.options, {
        maxPayloadBytes: this.maxPayloadBytes,
        field: `jobs[${i}]`,
      })
    }
    if (tx != null) return this.enqueueInTransaction(tx, normalized)
    return this.committer.submitMany(normalized)
  }

  private enqueueInTransaction(tx: CallerTransaction, jobs: NewJob[]): Promise<EnqueueResult[]> {
    const { store } = this
    if (!store.capabilities.transactionalEnqueue || store.enqueueInTransaction === undefined) {
      throw new ValidationError(
        'invalid_option',
        'tx',
        `the ${store.kind} store cannot enqueue inside a transaction of yours (PostgreSQL can)`,
      )
    }
    return store.enqueueInTransaction({ tx, jobs })
  }

  /** Waits for enqueues in flight; does not close the store (the caller owns it). */
  async close(): Promise<void> {
    await this.committer.drain()
  }
}

export function createClient<Jobs extends JobHandlers = JobHandlers>(options: ClientOptions): Client<Jobs> {
  return new Client<Jobs>(options)
}
