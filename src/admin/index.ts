// The admin layer: the operations the `ferry` command (and a dashboard) run against an open store,
// and withStore to open one for them. docs/admin.md describes each.
export { withStore, type StoreTarget } from './with-store.js'
export * from './events.js'
export {
  listJobs,
  getJob,
  getStats,
  JOB_COUNT_KEYS,
  LIST_LIMIT_DEFAULT,
  RECENT_WINDOW_MS,
  type GetJobParams,
  type JobCounts,
  type QueueCounts,
  type QueueReport,
  type StatsReport,
} from './inspect.js'
export {
  retryJobs,
  cancelJobs,
  changeJob,
  purgeJobs,
  deleteJobs,
  stopWorkers,
  type RetryJobsResult,
  type CancelJobsResult,
  type ChangeJobOptions,
  type JobChanges,
  type PurgeJobsResult,
  type DeleteJobsResult,
  type StopWorkersParams,
  type StopWorkersResult,
} from './manage.js'
export {
  runBulkAction,
  BULK_BATCH_SIZE_DEFAULT,
  type BulkAction,
  type BulkActionParams,
  type BulkActionResult,
  type BulkProgress,
} from './bulk.js'
export {
  pauseQueue,
  resumeQueue,
  limitQueue,
  listQueueControls,
  runningQueue,
  setQueueRetention,
  getQueueRetention,
  type RetentionReport,
} from './queue-control.js'
export {
  listSchedules,
  putSchedule,
  removeSchedule,
  pauseSchedule,
  resumeSchedule,
  runScheduleNow,
  type ScheduleReport,
} from './schedules.js'
export {
  listWorkers,
  getThroughput,
  type WorkersReport,
  type GetThroughputParams,
  type ThroughputMinute,
  type ThroughputReport,
} from './workers.js'
