/**
 * Jobs as every backend hands them out, from here: a claimed job is the job with the token of its
 * claim, which every later write about it must present.
 */
import type { ClaimedJob, Job } from '../../core/job.js'

export function toClaimedJob(job: Job, leaseToken: string): ClaimedJob {
  const claimed = job as ClaimedJob
  claimed.leaseToken = leaseToken
  return claimed
}
