/**
 * Store calls that many tests make, in the shape they had before the contract folded them into
 * its 18 methods: one job by id, why a wait ended, and clamping leases on its own.
 */
import type { Job, JobId } from '../../src/core/job.js'
import type { RecoverParams, Store, WaitParams, WaitResult } from '../../src/store/store.js'

/** The job of this id, or null: listJobs with one id. */
export async function getJob(store: Store, id: JobId): Promise<Job | null> {
  const [job] = (await store.listJobs({ ids: [id] })).jobs
  return job ?? null
}

/** The job of this id; fails the test when there is none. */
export async function getExistingJob(store: Store, id: JobId): Promise<Job> {
  const job = await getJob(store, id)
  if (job === null) throw new Error(`job ${id} is missing`)
  return job
}

/** Why a waitForWork ended (for waits without `claim`, which are handed no jobs). */
export async function waitReason(store: Store, params: WaitParams): Promise<WaitResult['reason']> {
  return (await store.waitForWork(params)).reason
}

/** recoverExpired's clamp alone (it recovers nothing): how many leases moved. */
export async function clampLeases(store: Store, params: Pick<RecoverParams, 'now'> = {}): Promise<number> {
  return (await store.recoverExpired({ ...params, leases: [], clampLeases: true })).clamped
}
