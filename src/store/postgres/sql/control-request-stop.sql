-- control with requestStop: asks every running worker to stop gracefully, and wakes the waiting ones in every
-- process ('*'). Workers compare the value with the one they saw at start, so it must change with
-- every request, even from a host whose clock is behind: it moves to now or one millisecond past
-- the previous request, whichever is later.
-- Params: $1 now (ms or NULL)
-- Returns: the record as the request left it, as control.sql: one row per queue with a setting (or
--          one with a NULL queue), each with `at` and schedules_version.
WITH stop AS (
  INSERT INTO :"schema".control AS c (key, at) VALUES ('stop', coalesce($1::bigint, :"schema".now_ms()))
  ON CONFLICT (key) DO UPDATE SET at = greatest(c.at + 1, excluded.at)
  RETURNING c.at
),
woken AS MATERIALIZED (SELECT stop.at, pg_notify('ferry:' || :'schema', '*') FROM stop)
SELECT woken.at, (SELECT c.at FROM :"schema".control AS c WHERE c.key = 'schedules') AS schedules_version,
       q.queue, q.paused_at, q.paused_by, q.pause_reason, q.concurrency, q.rate_limit, q.rate_per_ms,
       q.group_concurrency, q.group_rate_limit, q.group_rate_per_ms, q.keep_completed_ms, q.keep_dead_ms,
       q.keep_completed_count, q.keep_dead_count
FROM woken
LEFT JOIN :"schema".queues AS q ON true
