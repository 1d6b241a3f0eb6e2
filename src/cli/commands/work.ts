import type { Command } from 'commander'
import { listQueueControls } from '../../admin/queue-control.js'
import { withStore } from '../../admin/with-store.js'
import { parseByteSize, parseDuration } from '../../core/duration.js'
import { ValidationError } from '../../core/errors.js'
import { parseInteger } from '../../core/validate.js'
import {
  EXECUTION_STRATEGIES,
  RECYCLING_STRATEGIES,
  type ExecutionStrategy,
} from '../../worker/executors/create-executor.js'
import { Worker, type WorkerOptions } from '../../worker/worker.js'
import { ferryStderr, ferryStdout, ignoreStandardStreamErrors } from '../fd-writer.js'
import { painter } from '../format.js'
import { createLogger, LOG_LEVELS, resolveLogFormat, resolveLogLevel } from '../logger.js'
import { metricsAddress, openMetricsEndpoint, type MetricsFlags } from '../metrics-endpoint.js'
import { storeForJobs } from '../open.js'
import { logAborting, logQueueControls, logWorkerEvents, logWorkerStarted } from '../worker-log.js'
import { startWorkerSummary } from '../worker-summary.js'

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
  logLevel?: string
  logFormat: string
  summaryInterval: string
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
    .option('--verbose', 'log every job, not only failures (the same as --log-level debug)')
    .option('--log-level <level>', `how much to log: ${LOG_LEVELS.join(', ')} (env LOG_LEVEL; default info)`)
    .option(
      '--log-format <format>',
      'auto (pretty on a terminal, JSON lines otherwise), json or pretty',
      'auto',
    )
    .option('--summary-interval <duration>', 'on a terminal, a summary line this often; 0 for none', '5s')
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
      // The log goes where Ferry's own lines always went, stderr; stdout stays the handlers'.
      const interactive = process.stderr.isTTY === true
      const format = resolveLogFormat(flags.logFormat, interactive)
      const paint = format === 'pretty' ? painter(process.stderr) : (text: string): string => text
      const logger = createLogger({
        level: resolveLogLevel(flags.logLevel, flags.verbose === true, process.env.LOG_LEVEL),
        format,
        paint,
      })
      const summaryIntervalMs = parseDuration(flags.summaryInterval, '--summary-interval')
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
        logWorkerEvents(logger, worker, () => stopSignal)
        // Installed before start: a signal that arrives while the worker starts must stop it
        // gracefully, not kill the process with jobs claimed. One that arrives while it is
        // stopping already (a signal before, stop-workers, a limit) aborts the running jobs.
        const onSignal = (signal: NodeJS.Signals): void => {
          if (stopping) {
            logAborting(logger, worker)
            void worker.stop({ graceful: false })
          } else {
            stopSignal = signal
            void worker.stop()
          }
        }
        process.on('SIGINT', onSignal)
        process.on('SIGTERM', onSignal)
        await worker.start()
        logWorkerStarted(logger, worker, { store: store.kind, strategy, interactive })
        // A worker that sits idle on a paused queue should say why, not look stuck.
        logQueueControls(logger, await listQueueControls(store), worker.queues, Date.now())
        if (interactive && format === 'pretty' && summaryIntervalMs > 0) {
          startWorkerSummary(worker, {
            intervalMs: summaryIntervalMs,
            write: (line) => ferryStderr.line(line),
            paint,
          })
        }
        if (metrics !== null)
          logger.info({ event: 'metrics:listening', url: metrics.url }, `metrics on ${metrics.url}`)
        const reason = await worker.stopped
        await metrics?.close()
        process.off('SIGINT', onSignal)
        process.off('SIGTERM', onSignal)
        if (reason === 'store-lost') process.exitCode = 1
      })
    })
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
