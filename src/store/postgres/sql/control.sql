-- control: the workers' control record, read: when workers were last asked to stop, the queues
-- with a setting (queue control: paused, or limited), and the store's schedules version.
-- Params: none
-- Returns: one row per queue with a setting, each with `at` (the last stop request, or NULL when
--          nobody ever asked) and schedules_version (NULL before the first change of a schedule:
--          sql/schedules-write.sql); one row whose queue is NULL when no queue has a setting.
-- Uses: the control table's primary key; the queues table (small), read whole.
SELECT (SELECT c.at FROM :"schema".control AS c WHERE c.key = 'stop') AS at,
       (SELECT c.at FROM :"schema".control AS c WHERE c.key = 'schedules') AS schedules_version,
       q.queue, q.paused_at, q.paused_by, q.pause_reason, q.concurrency, q.rate_limit, q.rate_per_ms,
       q.group_concurrency, q.group_rate_limit, q.group_rate_per_ms, q.keep_completed_ms, q.keep_dead_ms,
       q.keep_completed_count, q.keep_dead_count
FROM (VALUES (1)) AS one(n)
LEFT JOIN :"schema".queues AS q ON true
