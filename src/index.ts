// The public API of 'ferry'. Store backends live behind their own subpaths ('ferry/sqlite', …)
// so that a user of one never loads another's driver.
export * from './core/errors.js'
export * from './core/job.js'
export type { Settlement, SettlementKind } from './core/outcome.js'
export type { JobContext, JobHandler, JobHandlers, PayloadOf } from './core/handler.js'
export { defineJobs, snooze, permanentFailure, JobSnooze, JobPermanentFailure } from './core/handler.js'
export { backoffMs, DEFAULT_BACKOFF, type BackoffOptions, type JobBackoffOption } from './core/backoff.js'
export { parseDuration, parseByteSize } from './core/duration.js'
export { normalizeJob, NAME_PATTERN, type EnqueueOptions } from './core/validate.js'
export { serializePayload, MAX_PAYLOAD_DEPTH } from './core/payload.js'
export { LOG_LINE_MAX_CHARS, LOG_MAX_LINES, PROGRESS_MAX_BYTES, type JobReport } from './core/progress.js'
export {
  normalizeSchedule,
  MISSED_POLICIES,
  OVERLAP_POLICIES,
  type ScheduleOptions,
  type ScheduleDefinition,
  type ScheduleJob,
  type MissedPolicy,
  type OverlapPolicy,
} from './core/schedule.js'
export { Scheduler, type SchedulerOptions, type FiredSlots } from './scheduler/scheduler.js'
export type * from './store/store.js'
export { openStore, migrateStore, DEFAULT_STORE_URL, type OpenStoreOptions } from './store/open-store.js'
export { STORE_METHODS } from './store/store.js'
export { wrapStore, type StoreCall, type StoreHooks } from './store/wrap-store.js'
export * from './admin/index.js'
export { Client, createClient, type ClientOptions, type JobSpec } from './client/client.js'
export type { TracingOption, TracingOptions } from './tracing/tracing-option.js'
export type { WaitForOptions } from './client/wait-for.js'
export { toJobError } from './core/job-error.js'
export {
  Worker,
  type WorkerOptions,
  type WorkerEvents,
  type WorkerCounts,
  type StopReason,
  type StopOptions,
} from './worker/worker.js'
export type { RetentionSweep } from './worker/retention-sweeper.js'
export {
  registerFerryMetrics,
  DEFAULT_STATS_INTERVAL_MS,
  type FerryMetrics,
  type FerryMetricsOptions,
  type MetricsRegistry,
} from './metrics/ferry-metrics.js'
export {
  serveMetrics,
  DEFAULT_METRICS_HOST,
  type MetricsServer,
  type MetricsServerOptions,
} from './metrics/metrics-server.js'
export { RETENTION_DEFAULTS } from './store/kernel/retention.js'
export {
  AttemptAbort,
  type Executor,
  type Execution,
  type ExecutionOutcome,
  type ChildExitDetail,
} from './worker/executors/executor.js'
export { InlineExecutor } from './worker/executors/inline.js'
export { loadHandlers, type HandlerSource } from './worker/handler-module.js'
export {
  createExecutor,
  EXECUTION_STRATEGIES,
  type ExecutionStrategy,
} from './worker/executors/create-executor.js'
export type { PoolExecutorOptions } from './worker/executors/pool/pool-options.js'
export {
  ForkExecutor,
  ProcessesExecutor,
  ThreadsExecutor,
  type ForkExecutorOptions,
  type ProcessesExecutorOptions,
  type ThreadsExecutorOptions,
} from './worker/executors/pool-executors.js'
