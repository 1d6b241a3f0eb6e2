-- control with a queue change (pause, resume, limit), the first statement of its transaction: the
-- queue's row as it stands, locked until the change commits, so that concurrent changes of one
-- queue apply one after the other and none is lost. A queue without a setting gets a row of NULLs,
-- which control-queue-write.sql fills or deletes before the commit (no claim ever sees it). The
-- store works out the row after the change from this one (store/kernel/queue-control.ts).
-- Params: $1 queue
-- Returns: one row: queue, paused_at, paused_by, pause_reason, and the limits (concurrency,
--          rate_limit, rate_per_ms, group_concurrency, group_rate_limit, group_rate_per_ms), the
--          retention (keep_completed_ms, keep_dead_ms, keep_completed_count, keep_dead_count),
--          server_now (the pause's time when the call gives no `now`).
-- Uses: the queues table's primary key (ON CONFLICT).
INSERT INTO :"schema".queues AS s (queue) VALUES ($1::text)
ON CONFLICT (queue) DO UPDATE SET queue = s.queue
RETURNING s.queue, s.paused_at, s.paused_by, s.pause_reason, s.concurrency, s.rate_limit, s.rate_per_ms,
          s.group_concurrency, s.group_rate_limit, s.group_rate_per_ms, s.keep_completed_ms, s.keep_dead_ms,
          s.keep_completed_count, s.keep_dead_count, :"schema".now_ms() AS server_now
