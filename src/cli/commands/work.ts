import type { Command } from 'commander'
import { listQueueControls } from '../../admin/queue-control.js'
import { withStore } from '../../admin/with-store.js'
import { parseByteSize, parseDuration } from '../../core/duration.js'
import { isStoreLost, ValidationError } from '../../core/errors.js'
import { parseInteger } from '../../core/validate.js'
import {
  EXECUTION_STRATEGIES,
  RECYCLING_STRATEGIES,
  type ExecutionStrategy,
} from '../../worker/executors/create-executor.js'
import type { QueueControl } from '../../store/store.js'
import { Worker, type StopReason, type WorkerOptions } from '../../worker/worker.js'
import { ferryStderr, ferryStdout, ignoreStandardStreamErrors } from '../fd-writer.js'
import { countOf, formatInstant, painter } from '../format.js'
import { metricsAddress, openMetricsEndpoint, type MetricsFlags } from '../metrics-endpoint.js'
import { storeForJobs } from '../open.js'
import { isPausedOrLimited } from './queue-control.js'

interface WorkFlags extends MetricsFlags {
  handlers: string
  queues: string
  concurrency: string
  prefetch: string
  limit?: string
  timeLimit?: string
  memoryLimit?: string
  lease: string
  recoverInterval?: string
  timeout?: string
  strategy: string
  maxJobsPerChild?: string
  maxRss?: string
  verbose?: boolean
  scheduler: boolean
  retention: boolean
}

export function registerWork(program: Command): void {
  program
    .command('work')
    .description(
      'run jobs from the given queues until stopped (Ctrl-C: finish running jobs; again: abort them)',
    )
    .requiredOption('--handlers <module>', 'module whose default export maps job names to handler functions')
    .option('--queues <a,b,c>', 'queues in strict priority order', 'default')
    .option('--concurrency <n>', 'jobs run at once', '10')
    .option(
      '--prefetch <n|auto>',
      'jobs claimed ahead and held for the next free slot; auto: only jobs that start soon',
      'auto',
    )
    .option('--limit <n>', 'stop after this many jobs')
    .option('--time-limit <duration>', 'stop after running this long: 60s, 10m, 1h')
    .option('--memory-limit <size>', 'stop once resident memory passes this: 512MB')
    .option('--lease <duration>', 'how long a claim holds a job between renewals', '30s')
    .option(
      '--recover-interval <duration>',
      'how often to look for jobs whose lease ran out (default: a third of the lease, at most 10s)',
    )
    .option('--timeout <duration>', 'time limit per attempt for jobs that set none')
    .option('--strategy <strategy>', `how handlers run: ${EXECUTION_STRATEGIES.join(', ')}`, 'inline')
    .option('--max-jobs-per-child <n>', 'threads, processes: replace a child after it ran this many jobs')
    .option('--max-rss <size>', 'threads, processes: replace a child once its memory passes this: 256MB')
    .option('--verbose', 'print a line for every job, not only failures')
    .option(
      '--metrics-port <port>',
      'serve Prometheus metrics on GET /metrics at this port (0: any free one)',
    )
    .option('--metrics-host <addr>', 'the address the metrics listen on (default 127.0.0.1)')
    .option(
      '--no-scheduler',
      "do not fire the store's schedules (by default every worker may; each slot fires once)",
    )
    .option(
      '--no-retention',
      'do not delete finished jobs past their retention (by default every worker does, a batch at a time)',
    )
    .action(async (flags: WorkFlags) => {
      // Inline handlers share this process's stdout and stderr and may end or close them: the
      // worker's own lines go to the descriptors (ferryStderr), and stream errors are dropped.
      ignoreStandardStreamErrors()
      const options: Omit<WorkerOptions, 'store'> = {
        handlers: flags.handlers,
        queues: flags.queues.split(',').map((queue) => queue.trim()),
        concurrency: parseInteger(flags.concurrency, '--concurrency'),
        prefetch:
          flags.prefetch.trim() === 'auto'
            ? 'auto'
            : parseInteger(flags.prefetch, '--prefetch', { orWord: 'auto' }),
        leaseMs: parseDuration(flags.lease, '--lease'),
        scheduler: flags.scheduler,
        retention: flags.retention,
      }
      if (flags.limit !== undefined) options.jobLimit = parseInteger(flags.limit, '--limit')
      if (flags.timeLimit !== undefined) options.timeLimitMs = parseDuration(flags.timeLimit, '--time-limit')
      if (flags.memoryLimit !== undefined) {
        options.memoryLimitBytes = parseByteSize(flags.memoryLimit, '--memory-limit')
      }
      if (flags.recoverInterval !== undefined) {
        options.recoverIntervalMs = parseDuration(flags.recoverInterval, '--recover-interval')
      }
      if (flags.timeout !== undefined) options.defaultTimeoutMs = parseDuration(flags.timeout, '--timeout')
      const strategy = toStrategy(flags.strategy)
      options.strategy = strategy
      if (flags.maxJobsPerChild !== undefined && !RECYCLING_STRATEGIES.includes(strategy)) {
        throw notRecycling('--max-jobs-per-child', strategy)
      }
      if (flags.maxRss !== undefined && !RECYCLING_STRATEGIES.includes(strategy)) {
        throw notRecycling('--max-rss', strategy)
      }
      if (strategy !== 'inline') {
        // The children's lines, forwarded with their job's prefix, go out the same crash-proof way.
        options.pool = { stdout: ferryStdout.toStream(), stderr: ferryStderr.toStream() }
        if (flags.maxJobsPerChild !== undefined) {
          options.pool.maxJobsPerChild = parseInteger(flags.maxJobsPerChild, '--max-jobs-per-child')
        }
        if (flags.maxRss !== undefined) options.pool.maxRssBytes = parseByteSize(flags.maxRss, '--max-rss')
      }

      const metricsAt = metricsAddress(flags)

      await withStore(storeForJobs(program), async (store) => {
        // Listening first: a port that is taken fails the command before any job is claimed.
        const metrics = metricsAt === null ? null : await openMetricsEndpoint(store, metricsAt)
        const worker = new Worker({ store: metrics?.store ?? store, ...options })
        metrics?.observe(worker)
        // The signal that stopped the worker, which the line saying it is stopping names.
        let stopSignal: NodeJS.Signals | null = null
        let stopping = false
        worker.on('worker:stopping', () => {
          stopping = true
        })
        report(worker, flags.verbose === true, () => stopSignal)
        // Installed before start: a signal that arrives while the worker starts must stop it
        // gracefully, not kill the process with jobs claimed. One that arrives while it is
        // stopping already (a signal before, stop-workers, a limit) aborts the running jobs.
        const onSignal = (signal: NodeJS.Signals): void => {
          if (stopping) {
            ferryStderr.line('ferry: aborting running jobs; they go back to ready')
            void worker.stop({ graceful: false })
          } else {
            stopSignal = signal
            void worker.stop()
          }
        }
        process.on('SIGINT', onSignal)
        process.on('SIGTERM', onSignal)
        await worker.start()
        ferryStderr.line(
          `ferry: worker ${worker.workerId} on ${worker.queues.join(', ')} ` +
            `(concurrency ${worker.concurrency}, strategy ${strategy}), ` +
            `claiming only jobs named ${[...worker.jobNames].join(', ')}; Ctrl-C stops after the running jobs`,
        )
        // A worker that sits idle on a paused queue should say why, not look stuck.
        for (const line of queueControlLines(await listQueueControls(store), worker.queues, Date.now())) {
          ferryStderr.line(line)
        }
        if (metrics !== null) ferryStderr.line(`ferry: metrics on ${metrics.url}`)
        const reason = await worker.stopped
        await metrics?.close()
        process.off('SIGINT', onSignal)
        process.off('SIGTERM', onSignal)
        const { completed, failed, dead, snoozed, leaseLost } = worker.counts
        ferryStderr.line(
          `ferry: stopped (${reason}): ${completed} completed, ${failed} failed and retried, ${dead} dead, ` +
            `${snoozed} snoozed, ${leaseLost} lease lost`,
        )
        if (reason === 'store-lost') process.exitCode = 1
      })
    })
}

/** The worker's lines on stderr; `stopSignal` is the signal that stopped it, if one did. */
function report(worker: Worker, verbose: boolean, stopSignal: () => NodeJS.Signals | null): void {
  const out = (line: string): void => ferryStderr.line(line)
  const paint = painter(process.stderr)
  worker.on('job:failed', (job, error, retryAt) =>
    out(
      paint(
        `job ${job.id} ${job.name} failed (attempt ${job.attempts}/${job.maxAttempts}): ${error.message}; ` +
          `retry at ${formatInstant(retryAt, Date.now())}`,
        'yellow',
      ),
    ),
  )
  worker.on('job:dead', (job, error) =>
    out(paint(`job ${job.id} ${job.name} is dead after attempt ${job.attempts}: ${error.message}`, 'red')),
  )
  worker.on('job:lease-lost', (job) =>
    out(`job ${job.id} ${job.name}: lease lost (cancelled, or recovered by another worker)`),
  )
  worker.on('worker:error', (error) => {
    const message = (error as Error).message ?? String(error)
    out(
      paint(
        isStoreLost(error)
          ? `ferry: the store is gone, stopping: ${message}`
          : `ferry: store error, retrying: ${message}`,
        'red',
      ),
    )
  })
  worker.on('worker:stopping', (reason) => out(stoppingLine(reason, worker.activeCount, stopSignal())))
  if (verbose) {
    worker.on('job:completed', (job) => out(`job ${job.id} ${job.name} completed`))
    worker.on('schedule:fired', ({ schedule, slots, ids, outcome }) =>
      out(
        outcome === 'overlap'
          ? `schedule ${schedule}: slot passed over, its last run has not finished`
          : `schedule ${schedule} fired ${slots.map(({ slot, late }) => `${new Date(slot).toISOString()}${late ? ' (late)' : ''}`).join(', ')}: job ${ids.join(', ')}`,
      ),
    )
    worker.on('job:snoozed', (job, runAt) =>
      out(`job ${job.id} ${job.name} snoozed until ${formatInstant(runAt, Date.now())}`),
    )
  }
}

/**
 * One line when the worker begins to stop: why, and, when jobs are still running, that it waits
 * for them and how to abort them instead (the same signal again: Ctrl-C is SIGINT's name only).
 */
function stoppingLine(reason: StopReason, runningCount: number, signal: NodeJS.Signals | null): string {
  const why = signal === null ? reason : `${reason}: ${signal}`
  if (runningCount === 0 || reason === 'store-lost') return `ferry: stopping (${why})`
  const again = signal === null ? 'Ctrl-C' : signal === 'SIGINT' ? 'Ctrl-C again' : `${signal} again`
  return `ferry: stopping (${why}) after ${countOf(runningCount, 'running job')}; ${again} to abort them`
}

function toStrategy(text: string): ExecutionStrategy {
  const strategy = EXECUTION_STRATEGIES.find((known) => known === text)
  if (strategy === undefined) {
    throw new ValidationError(
      'invalid_option',
      '--strategy',
      `"${text}" is not a strategy (use ${EXECUTION_STRATEGIES.join(', ')})`,
    )
  }
  return strategy
}

/** Recycling options are refused where nothing is recycled, rather than silently ignored. */
function notRecycling(field: string, strategy: ExecutionStrategy): ValidationError {
  const why = strategy === 'fork' ? 'fork starts a new process for every job' : 'inline runs no children'
  return new ValidationError(
    'invalid_option',
    field,
    `applies to --strategy threads or processes only (${why})`,
  )
}

/** One line per queue of the worker's that is paused or limited, as it starts. */
function queueControlLines(
  controls: readonly QueueControl[],
  queues: readonly string[],
  now: number,
): string[] {
  return controls
    .filter((control) => queues.includes(control.queue) && isPausedOrLimited(control))
    .map(({ queue, paused, limits }) => {
      const limit =
        limits.concurrency === null ? '' : `at most ${limits.concurrency} of its jobs active at once`
      if (paused === null) return `ferry: queue ${queue}: ${limit}`
      const who = paused.by === null ? '' : ` by ${paused.by}`
      const why = paused.reason === null ? '' : ` (${paused.reason})`
      return `ferry: queue ${queue} is paused since ${formatInstant(paused.at, now)}${who}${why}: its jobs wait for \`ferry resume ${queue}\`${limit === '' ? '' : `; ${limit}`}`
    })
}
