// The admin operations that change jobs or workers: what `ferry retry`, `cancel`, `purge`,
// `jobs change` and `stop-workers` do, and a dashboard's bulk actions. Each takes an open store and the store's own
// params, refuses bad ones before anything changes (a malformed job id included, which the store
// would skip in silence), and says what it did as plain data.
import { JobNotChangeableError, JobNotFoundError } from '../core/errors.js'
import type { Job, JobId } from '../core/job.js'
import { checkJobChange } from '../store/kernel/change-jobs.js'
import {
  checkCancelParams,
  checkControlParams,
  checkDeleteJobsParams,
  checkPurgeParams,
  checkRetryParams,
} from '../store/params.js'
import type {
  CancelParams,
  ControlParams,
  DeleteJobsParams,
  JobChange,
  PurgeParams,
  RetryParams,
  Store,
} from '../store/store.js'
import { runBulkAction } from './bulk.js'
import { getJob } from './inspect.js'
import { assertJobIds } from './job-ids.js'

export interface RetryJobsResult {
  /** Dead jobs moved back to ready; ids of jobs that were not dead are not counted. */
  movedCount: number
}

/**
 * Runs dead jobs again with fresh attempts: those of `ids`, or `allDead` (of `queue`, if given).
 * Every dead job goes a batch at a time (runBulkAction), not in the store's one statement or
 * script for all of them, which would hold the store's write lock, rows or server for as long as
 * it takes (100,000 dead jobs: bench dashboard-lists) while workers wait to claim.
 */
export async function retryJobs(store: Store, params: RetryParams): Promise<RetryJobsResult> {
  checkRetryParams(params)
  const { ids, queue, now } = params
  if (ids !== undefined) {
    assertJobIds(ids, 'ids')
    return { movedCount: await store.retry(params) }
  }
  const filter = { state: 'dead' as const, ...(queue === undefined ? {} : { queue }) }
  const { changed } = await runBulkAction(store, {
    action: 'retry',
    filter,
    ...(now === undefined ? {} : { now }),
  })
  return { movedCount: changed }
}

export interface DeleteJobsResult {
  /** Jobs deleted; active, unknown and already deleted ids are not counted. */
  deletedCount: number
}

/** Deletes jobs that are not active (scheduled, ready, completed, dead): cancel an active job first. */
export async function deleteJobs(store: Store, params: DeleteJobsParams): Promise<DeleteJobsResult> {
  checkDeleteJobsParams(params)
  assertJobIds(params.ids, 'ids')
  return { deletedCount: await store.deleteJobs(params) }
}

export interface CancelJobsResult {
  /** Unfinished jobs ended as dead; finished and unknown ids are not counted. */
  cancelledCount: number
}

/** Ends scheduled, ready and active jobs as dead; an active job's worker loses its lease. */
export async function cancelJobs(store: Store, params: CancelParams): Promise<CancelJobsResult> {
  checkCancelParams(params)
  assertJobIds(params.ids, 'ids')
  return { cancelledCount: await store.cancel(params) }
}

/** What changeJob may change of a job: each field given replaces the job's, at least one must be. */
export interface JobChanges extends Omit<JobChange, 'id' | 'runAt'> {
  /** A Date or epoch ms; at or before now, the job is ready at once (run now). */
  runAt?: Date | number
}

export interface ChangeJobOptions {
  /** The largest payload accepted, in bytes of JSON, as the Client's option. Default 1 MiB. */
  maxPayloadBytes?: number
}

/**
 * Changes a job that has not started (scheduled or ready): its priority, run time, payload or
 * maxAttempts, in one atomic step with the workers' claims. Returns the job as changed.
 * JobNotFoundError when there is no such job; JobNotChangeableError, nothing written, when it is
 * active (a worker holds it) or finished.
 */
export async function changeJob(
  store: Store,
  id: JobId,
  changes: JobChanges,
  { maxPayloadBytes }: ChangeJobOptions = {},
): Promise<Job> {
  assertJobIds([id], 'id')
  const { runAt } = changes
  const change: JobChange = {
    ...changes,
    id,
    ...(runAt instanceof Date ? { runAt: runAt.getTime() } : {}),
  } as JobChange
  // Checked here too, so that a bad field is named as given (`priority`, not `changes[0].priority`).
  checkJobChange(change, '', { maxPayloadBytes, isJobId: () => true })
  const [result] = (await store.changeJobs({ changes: [change], maxPayloadBytes })).results
  if (result === 'not_found') throw new JobNotFoundError(id)
  const job = await getJob(store, { id })
  // Gone in between: purged since it finished, the change was refused or not.
  if (job === null) throw new JobNotFoundError(id)
  if (result === 'not_changeable') throw new JobNotChangeableError(id, job.state)
  return job
}

export interface PurgeJobsResult {
  deletedCount: number
}

/** Deletes finished jobs in `state`, finished at least `olderThanMs` ago, of `queue` if given. */
export async function purgeJobs(store: Store, params: PurgeParams): Promise<PurgeJobsResult> {
  checkPurgeParams(params)
  return { deletedCount: await store.purge(params) }
}

/** The control call's params less the request, which stopWorkers always makes. */
export type StopWorkersParams = Omit<ControlParams, 'requestStop'>

export interface StopWorkersResult {
  /** The stop request now in force (epoch ms): workers started before it stop. */
  stopRequestedAt: number
}

/** Asks every worker on the store, in any process, to stop after its running jobs. */
export async function stopWorkers(store: Store, params: StopWorkersParams = {}): Promise<StopWorkersResult> {
  checkControlParams(params)
  // The store's answer rather than our clock: it keeps a newer request if one was made.
  const { stopRequestedAt } = await store.control({ ...params, requestStop: true })
  return { stopRequestedAt: stopRequestedAt! }
}
