-- stats: per queue, the scheduled jobs whose time has come (:now), which stats() counts as ready
-- (a claim would make them so), and the least run time among them.
-- Params: :now
-- Returns: queue, count, oldest.
-- Uses: ferry_jobs_scheduled, the range of due jobs only: workers claim those promptly, so it is
-- short. INDEXED BY: without ANALYZE, SQLite may prefer a scan of the table over a partial index
-- for the GROUP BY; the range is what bounds this read.
SELECT queue, count(*) AS count, min(run_at) AS oldest
FROM ferry_jobs INDEXED BY ferry_jobs_scheduled
WHERE state = 'scheduled' AND run_at <= :now
GROUP BY queue
