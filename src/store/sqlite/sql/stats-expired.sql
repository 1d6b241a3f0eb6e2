-- stats: jobs per queue that ended dead because they were not started by their start deadline.
-- Params: none
-- Returns: queue, count.
-- Uses: ferry_jobs_finished (state = 'dead'); only jobs that had a deadline are looked into.
SELECT queue, count(*) AS count
FROM ferry_jobs
WHERE state = 'dead' AND finished_at IS NOT NULL AND expires_at IS NOT NULL
  AND last_error ->> '$.kind' = 'expired'
GROUP BY 1
