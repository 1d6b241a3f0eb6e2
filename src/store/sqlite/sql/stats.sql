-- stats: jobs per queue and state; scheduled jobs already due count as ready.
-- Params: :now
-- Returns: queue, state, count, oldest (the least run_at: for the ready row, the oldest ready job's).
SELECT queue,
       CASE WHEN state = 'scheduled' AND run_at <= :now THEN 'ready' ELSE state END AS state,
       count(*) AS count, min(run_at) AS oldest
FROM ferry_jobs
GROUP BY 1, 2
ORDER BY 1
