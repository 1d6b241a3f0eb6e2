-- stats: jobs per queue and state (scheduled jobs already due count as ready), then the jobs that
-- finished since $2 (completed or dead), for throughput, then the dead jobs that were never
-- started by their start deadline (cause 'expired'), in one round trip. Only the last errors of
-- dead jobs that had a deadline are parsed.
-- Params: $1 now, $2 since (both ms; NULL now is the server's clock, and since is then now - $3)
--         $3 recent window (ms)
-- Returns: kind ('count'|'recent'|'expired'), queue, state, count, oldest (of a 'count' row: the least
--   run_at of its jobs, for the ready row the oldest ready job's; NULL on the other kinds).
-- Uses: jobs_finished (state = 'dead') for the expired count.
WITH clock AS (SELECT coalesce($1::bigint, :"schema".now_ms()) AS at)
SELECT 'count' AS kind, j.queue,
       CASE WHEN j.state = 'scheduled' AND j.run_at <= clock.at THEN 'ready' ELSE j.state END AS state,
       count(*)::integer AS count, min(j.run_at)::bigint AS oldest
FROM :"schema".jobs AS j, clock
GROUP BY 2, 3
UNION ALL
SELECT 'recent', j.queue, j.state, count(*)::integer, NULL
FROM :"schema".jobs AS j, clock
WHERE j.state IN ('completed', 'dead') AND j.finished_at IS NOT NULL AND j.finished_at >= clock.at - $2::bigint
GROUP BY 2, 3
UNION ALL
SELECT 'expired', j.queue, j.state, count(*)::integer, NULL
FROM :"schema".jobs AS j
WHERE j.state = 'dead' AND j.finished_at IS NOT NULL AND j.expires_at IS NOT NULL
  AND j.last_error::json ->> 'kind' = 'expired'
GROUP BY 2, 3
