// What `ferry work` logs, fed from the worker's events: the worker never sees the logger. Every
// record has `event` (the worker event's name, or worker:aborting, queue:paused, queue:limited,
// store:recovered) and the fields a log search needs; `msg` says the same in a sentence, which is
// all the pretty form shows.
//
// Levels: error for dead jobs and a lost store; warn for failed attempts, lease losses, store
// errors, aborted jobs and paused queues; info for the worker's start and stop, store recoveries,
// sweeps that did something and schedule fires; debug for every finished job; trace for claims.

import { isStoreLost } from '../core/errors.js'
import type { ClaimedJob, JobError } from '../core/job.js'
import type { QueueControl } from '../store/store.js'
import type { StopReason, Worker } from '../worker/worker.js'
import { countOf, formatInstant, toIso } from './format.js'
import type { Logger } from './logger.js'
import { isPausedOrLimited } from './commands/queue-control.js'

/** The fields every record about one job carries. */
function jobFields(job: ClaimedJob): Record<string, unknown> {
  return { jobId: job.id, queue: job.queue, jobName: job.name, attempt: job.attempts }
}

function errorFields({ kind, message, name }: JobError): Record<string, unknown> {
  return name === undefined ? { kind, message } : { kind, name, message }
}

/** The start record: what the worker runs, and where. */
export function logWorkerStarted(
  logger: Logger,
  worker: Worker,
  { store, strategy, interactive }: { store: string; strategy: string; interactive: boolean },
): void {
  const jobNames = [...worker.jobNames]
  logger.info(
    {
      event: 'worker:started',
      workerId: worker.workerId,
      store,
      queues: worker.queues,
      concurrency: worker.concurrency,
      prefetch: worker.prefetch,
      strategy,
      jobNames,
    },
    `worker ${worker.workerId} on ${worker.queues.join(', ')} ` +
      `(concurrency ${worker.concurrency}, strategy ${strategy}, ${store} store), ` +
      `claiming only jobs named ${jobNames.join(', ')}` +
      (interactive ? '; Ctrl-C stops after the running jobs' : ''),
  )
}

/** One record per queue of the worker's that is paused or limited, as it starts: why it may sit idle. */
export function logQueueControls(
  logger: Logger,
  controls: readonly QueueControl[],
  queues: readonly string[],
  now: number,
): void {
  for (const control of controls) {
    if (!queues.includes(control.queue) || !isPausedOrLimited(control)) continue
    const { queue, paused, limits } = control
    const limit =
      limits.concurrency === null ? '' : `at most ${limits.concurrency} of its jobs active at once`
    if (paused === null) {
      logger.info({ event: 'queue:limited', queue, limits }, `queue ${queue}: ${limit}`)
      continue
    }
    const who = paused.by === null ? '' : ` by ${paused.by}`
    const why = paused.reason === null ? '' : ` (${paused.reason})`
    logger.warn(
      {
        event: 'queue:paused',
        queue,
        pausedAt: toIso(paused.at),
        pausedBy: paused.by,
        reason: paused.reason,
        limits,
      },
      `queue ${queue} is paused since ${formatInstant(paused.at, now)}${who}${why}: ` +
        `its jobs wait for \`ferry resume ${queue}\`${limit === '' ? '' : `; ${limit}`}`,
    )
  }
}

/** When a stop signal came while the worker was stopping already. */
export function logAborting(logger: Logger, worker: Worker): void {
  logger.warn(
    { event: 'worker:aborting', running: worker.activeCount },
    'aborting running jobs; they go back to ready',
  )
}

/**
 * Logs the worker's events from now on. `stopSignal` is the signal that stopped it, if one did,
 * which the stopping record names.
 */
export function logWorkerEvents(
  logger: Logger,
  worker: Worker,
  stopSignal: () => NodeJS.Signals | null,
): void {
  // The records of every job are built only at the levels that keep them: at info, a busy worker
  // pays nothing per job for a log that would drop them.
  if (logger.isLevelEnabled('trace')) {
    worker.on('job:claimed', (job) =>
      logger.trace({ event: 'job:claimed', ...jobFields(job) }, `job ${job.id} ${job.name} claimed`),
    )
  }
  if (logger.isLevelEnabled('debug')) {
    worker.on('job:completed', (job) =>
      logger.debug({ event: 'job:completed', ...jobFields(job) }, `job ${job.id} ${job.name} completed`),
    )
    worker.on('job:snoozed', (job, runAt) =>
      logger.debug(
        { event: 'job:snoozed', ...jobFields(job), runAt: toIso(runAt) },
        `job ${job.id} ${job.name} snoozed until ${formatInstant(runAt, Date.now())}`,
      ),
    )
  }
  worker.on('job:failed', (job, error, retryAt) =>
    logger.warn(
      {
        event: 'job:failed',
        ...jobFields(job),
        maxAttempts: job.maxAttempts,
        error: errorFields(error),
        retryAt: toIso(retryAt),
      },
      `job ${job.id} ${job.name} failed (attempt ${job.attempts}/${job.maxAttempts}): ${error.message}; ` +
        `retry at ${formatInstant(retryAt, Date.now())}`,
    ),
  )
  worker.on('job:dead', (job, error) =>
    logger.error(
      { event: 'job:dead', ...jobFields(job), maxAttempts: job.maxAttempts, error: errorFields(error) },
      `job ${job.id} ${job.name} is dead after attempt ${job.attempts}: ${error.message}`,
    ),
  )
  worker.on('job:lease-lost', (job) =>
    logger.warn(
      { event: 'job:lease-lost', ...jobFields(job) },
      `job ${job.id} ${job.name}: lease lost (cancelled, or recovered by another worker)`,
    ),
  )
  logStoreHealth(logger, worker)
  worker.on('recover:done', ({ retried, dead, expired, clamped }) => {
    if (retried.length + dead.length + expired.length + clamped === 0) return
    const parts = [
      retried.length > 0 ? `${countOf(retried.length, 'job')} back to run again` : '',
      dead.length > 0 ? `${countOf(dead.length, 'job')} dead with no attempts left` : '',
      expired.length > 0 ? `${countOf(expired.length, 'job')} expired` : '',
      clamped > 0 ? `${countOf(clamped, 'lease')} shortened` : '',
    ]
    logger.info(
      { event: 'recover:done', retried, dead, expired, clamped },
      `recovered jobs whose lease ran out: ${parts.filter((part) => part !== '').join(', ')}`,
    )
  })
  worker.on('retention:done', ({ deleted, batches }) => {
    if (deleted === 0) return
    logger.info(
      { event: 'retention:done', deleted, batches },
      `retention deleted ${countOf(deleted, 'finished job')} past their retention (${countOf(batches, 'batch')})`,
    )
  })
  worker.on('schedule:fired', ({ schedule, slots, ids, outcome }) =>
    logger.info(
      {
        event: 'schedule:fired',
        schedule,
        outcome,
        slots: slots.map(({ slot, late }) => ({ slot: toIso(slot), late })),
        jobIds: ids,
      },
      outcome === 'overlap'
        ? `schedule ${schedule}: slot passed over, its last run has not finished`
        : `schedule ${schedule} fired ${slots.map(({ slot, late }) => `${new Date(slot).toISOString()}${late ? ' (late)' : ''}`).join(', ')}: job ${ids.join(', ')}`,
    ),
  )
  worker.on('worker:stopping', (reason) => {
    const signal = stopSignal()
    logger.info(
      { event: 'worker:stopping', reason, signal, running: worker.activeCount },
      stoppingMessage(reason, worker.activeCount, signal),
    )
  })
  worker.on('worker:stopped', (reason) => {
    const counts = worker.counts
    const { completed, failed, dead, snoozed, leaseLost } = counts
    logger.info(
      { event: 'worker:stopped', reason, counts },
      `stopped (${reason}): ${completed} completed, ${failed} failed and retried, ${dead} dead, ` +
        `${snoozed} snoozed, ${leaseLost} lease lost`,
    )
  })
}

/**
 * Store errors: the first of an outage at warn, the ones after it at debug (a store that is down
 * fails every call, again and again), and a record once the store answers again. Any event that
 * only a store call's success brings (a claim, a settled job, a recovery sweep) means it does.
 */
function logStoreHealth(logger: Logger, worker: Worker): void {
  let outage: { since: number; errors: number } | null = null
  worker.on('worker:error', (error) => {
    const message = (error as Error | undefined)?.message ?? String(error)
    const code = (error as { code?: unknown } | undefined)?.code
    const fields = {
      event: 'worker:error',
      error: { message, ...(typeof code === 'string' ? { code } : {}) },
    }
    if (isStoreLost(error)) {
      logger.error({ ...fields, lost: true }, `the store is gone, stopping: ${message}`)
      return
    }
    if (outage === null) {
      outage = { since: Date.now(), errors: 1 }
      logger.warn(fields, `store error, retrying: ${message}`)
    } else {
      outage.errors++
      logger.debug(fields, `store error, retrying: ${message}`)
    }
  })
  const answered = (): void => {
    if (outage === null) return
    const { since, errors } = outage
    outage = null
    const ms = Date.now() - since
    logger.info(
      { event: 'store:recovered', errors, outageMs: ms },
      `the store answers again, after ${countOf(errors, 'error')} in ${formatSeconds(ms)}`,
    )
  }
  for (const event of [
    'job:claimed',
    'job:completed',
    'job:failed',
    'job:dead',
    'job:snoozed',
    'recover:done',
  ] as const) {
    worker.on(event, answered)
  }
}

function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`
}

/**
 * When the worker begins to stop: why, and, when jobs are still running, that it waits for them
 * and how to abort them instead (the same signal again: Ctrl-C is SIGINT's name only).
 */
function stoppingMessage(reason: StopReason, runningCount: number, signal: NodeJS.Signals | null): string {
  const why = signal === null ? reason : `${reason}: ${signal}`
  if (runningCount === 0 || reason === 'store-lost') return `stopping (${why})`
  const again = signal === null ? 'Ctrl-C' : signal === 'SIGINT' ? 'Ctrl-C again' : `${signal} again`
  return `stopping (${why}) after ${countOf(runningCount, 'running job')}; ${again} to abort them`
}
