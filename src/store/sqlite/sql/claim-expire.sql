-- claim, step 0, and recoverExpired with expireJobs: jobs not started by their start deadline end
-- dead (cause 'expired') without ever running, in every queue, paused ones included, before the
-- claim picks: no claim can hand out a job whose deadline has passed.
-- Params: :now, :last_error (the expired error's JSON, kernel/jobs.ts EXPIRED_ERROR), :limit
-- Returns: id of each job ended.
-- Uses: ferry_jobs_deadline (migrations/0007), which holds only unstarted jobs with a deadline: a
-- store without any costs one empty seek.
UPDATE ferry_jobs
SET state = 'dead', last_error = :last_error, finished_at = :now, updated_at = :now
WHERE id IN (
  SELECT id FROM ferry_jobs INDEXED BY ferry_jobs_deadline
  WHERE expires_at <= :now AND state IN ('ready', 'scheduled')
  ORDER BY expires_at
  LIMIT :limit
)
RETURNING id
