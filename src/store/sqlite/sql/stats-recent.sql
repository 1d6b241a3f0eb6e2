-- stats: jobs per queue that finished (completed or dead) since :since, for throughput.
-- Params: :since
-- Returns: queue, state, count.
-- Uses: ferry_jobs_finished (state, finished_at): a range per state, the size of the window.
SELECT queue, state, count(*) AS count
FROM ferry_jobs
WHERE state IN ('completed', 'dead') AND finished_at IS NOT NULL AND finished_at >= :since
GROUP BY 1, 2
