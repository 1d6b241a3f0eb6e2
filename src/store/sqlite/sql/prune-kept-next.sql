-- prune: when the first finished job with its own keepForMs runs out (finish time + keepForMs).
-- Params: none
-- Returns: that instant, or no row when no finished job has a keepForMs.
-- Uses: ferry_jobs_kept (its first entry).
SELECT finished_at + keep_for_ms AS kept_until FROM ferry_jobs
WHERE finished_at IS NOT NULL AND keep_for_ms IS NOT NULL
ORDER BY finished_at + keep_for_ms
LIMIT 1
