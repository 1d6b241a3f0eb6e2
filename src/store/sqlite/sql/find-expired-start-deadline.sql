-- findExpiredLeases, and every claim before it ends any (claim-rows.ts expireJobs): whether some
-- job that has not started is past its start deadline, which claim-expire.sql then ends (for the
-- recoverer: a paused queue's jobs, which no claim reads).
-- Params: :now
-- Returns: 1, or no row.
-- Uses: ferry_jobs_deadline (migrations/0007): one seek.
SELECT 1 FROM ferry_jobs INDEXED BY ferry_jobs_deadline
WHERE expires_at <= :now AND state IN ('ready', 'scheduled')
LIMIT 1
