import type { Command } from 'commander'
import { parseByteSize, parseDuration } from '../../core/duration.js'
import { isStoreLost, ValidationError } from '../../core/errors.js'
import { openStore } from '../../store/open-store.js'
import type { PoolExecutorOptions } from '../../worker/executors/child-pool.js'
import {
  createExecutor,
  EXECUTION_STRATEGIES,
  type ExecutionStrategy,
} from '../../worker/executors/create-executor.js'
import { Worker, type WorkerOptions } from '../../worker/worker.js'
import { ferryStderr, ferryStdout, ignoreStandardStreamErrors } from '../fd-writer.js'

interface WorkFlags {
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
}

/** The strategies that keep children between jobs, so recycling options mean something. */
const POOLED: readonly ExecutionStrategy[] = ['threads', 'processes']

export function registerWork(program: Command): void {
  program
    .command('work')
    .description(
      'run jobs from the given queues until stopped (Ctrl-C: finish running jobs; again: abort them)',
    )
    .requiredOption('--handlers <module>', 'module whose default export maps job names to handler functions')
    .option('--queues <a,b,c>', 'queues in strict priority order', 'default')
    .option('--concurrency <n>', 'jobs run at once', '10')
    .option('--prefetch <n>', 'jobs claimed ahead and held for the next free slot (for many short jobs)', '0')
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
    .action(async (flags: WorkFlags) => {
      // Inline handlers share this process's stdout and stderr and may end or close them: the
      // worker's own lines go to the descriptors (ferryStderr), and stream errors are dropped.
      ignoreStandardStreamErrors()
      const options: Omit<WorkerOptions, 'store'> = {
        handlers: flags.handlers,
        queues: flags.queues.split(',').map((queue) => queue.trim()),
        concurrency: toInteger(flags.concurrency, '--concurrency'),
        prefetch: toInteger(flags.prefetch, '--prefetch'),
        leaseMs: parseDuration(flags.lease, '--lease'),
      }
      if (flags.limit !== undefined) options.jobLimit = toInteger(flags.limit, '--limit')
      if (flags.timeLimit !== undefined) options.timeLimitMs = parseDuration(flags.timeLimit, '--time-limit')
      if (flags.memoryLimit !== undefined) {
        options.memoryLimitBytes = parseByteSize(flags.memoryLimit, '--memory-limit')
      }
      if (flags.recoverInterval !== undefined) {
        options.recoverIntervalMs = parseDuration(flags.recoverInterval, '--recover-interval')
      }
      if (flags.timeout !== undefined) options.defaultTimeoutMs = parseDuration(flags.timeout, '--timeout')
      const strategy = toStrategy(flags.strategy)
      // The children's lines, forwarded with their job's prefix, go out the same crash-proof way.
      const pool: PoolExecutorOptions = {
        size: options.concurrency!,
        stdout: ferryStdout.toStream(),
        stderr: ferryStderr.toStream(),
      }
      if (flags.maxJobsPerChild !== undefined) {
        if (!POOLED.includes(strategy)) throw notPooled('--max-jobs-per-child', strategy)
        pool.maxJobsPerChild = toInteger(flags.maxJobsPerChild, '--max-jobs-per-child')
      }
      if (flags.maxRss !== undefined) {
        if (!POOLED.includes(strategy)) throw notPooled('--max-rss', strategy)
        pool.maxRssBytes = parseByteSize(flags.maxRss, '--max-rss')
      }

      const store = await openStore(program.opts<{ store: string }>().store)
      try {
        // Built here, not by the Worker, so the pool options reach it; the worker starts and closes it.
        const executor = createExecutor(strategy, options.handlers, pool)
        const worker = new Worker({ store, ...options, executor })
        report(worker, flags.verbose === true)
        // Installed before start: a signal that arrives while the worker starts must stop it
        // gracefully, not kill the process with jobs claimed.
        let signals = 0
        const onSignal = (): void => {
          if (signals++ > 0) {
            ferryStderr.line('ferry: aborting running jobs; they go back to ready')
            void worker.stop({ graceful: false })
          } else {
            ferryStderr.line(
              `ferry: stopping after ${worker.activeCount} running job(s); Ctrl-C again to abort them`,
            )
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
        const reason = await worker.stopped
        process.off('SIGINT', onSignal)
        process.off('SIGTERM', onSignal)
        const { completed, failed, dead, snoozed, leaseLost } = worker.counts
        ferryStderr.line(
          `ferry: stopped (${reason}): ${completed} completed, ${failed} failed and retried, ${dead} dead, ` +
            `${snoozed} snoozed, ${leaseLost} lease lost`,
        )
        if (reason === 'store-lost') process.exitCode = 1
      } finally {
        await store.close()
      }
    })
}

function report(worker: Worker, verbose: boolean): void {
  const out = (line: string): void => ferryStderr.line(line)
  worker.on('job:failed', (job, error, retryAt) =>
    out(
      `job ${job.id} ${job.name} failed (attempt ${job.attempts}/${job.maxAttempts}): ${error.message}; retry at ${new Date(retryAt).toISOString()}`,
    ),
  )
  worker.on('job:dead', (job, error) =>
    out(`job ${job.id} ${job.name} is dead after attempt ${job.attempts}: ${error.message}`),
  )
  worker.on('job:lease-lost', (job) =>
    out(`job ${job.id} ${job.name}: lease lost (cancelled, or recovered by another worker)`),
  )
  worker.on('worker:error', (error) => {
    const message = (error as Error).message ?? String(error)
    out(
      isStoreLost(error)
        ? `ferry: the store is gone, stopping: ${message}`
        : `ferry: store error, retrying: ${message}`,
    )
  })
  worker.on('worker:stopping', (reason) => out(`ferry: stopping (${reason})`))
  if (verbose) {
    worker.on('job:completed', (job) => out(`job ${job.id} ${job.name} completed`))
    worker.on('job:snoozed', (job, runAt) =>
      out(`job ${job.id} ${job.name} snoozed until ${new Date(runAt).toISOString()}`),
    )
  }
}

function toInteger(text: string, field: string): number {
  const value = Number(text)
  if (text.trim() === '' || !Number.isInteger(value)) {
    throw new ValidationError('invalid_option', field, `must be an integer (got "${text}")`)
  }
  return value
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
function notPooled(field: string, strategy: ExecutionStrategy): ValidationError {
  const why = strategy === 'fork' ? 'fork starts a new process for every job' : 'inline runs no children'
  return new ValidationError(
    'invalid_option',
    field,
    `applies to --strategy threads or processes only (${why})`,
  )
}
