-- queue control: writes a queue's settings as a change left them (store/kernel/queue-control.ts).
-- Params: :queue, :paused_at, :paused_by, :pause_reason, :concurrency, :rate_limit, :rate_per_ms,
--   :group_concurrency, :group_rate_limit, :group_rate_per_ms, :keep_completed_ms, :keep_dead_ms,
--   :keep_completed_count, :keep_dead_count
INSERT INTO ferry_queues (queue, paused_at, paused_by, pause_reason, concurrency, rate_limit, rate_per_ms,
  group_concurrency, group_rate_limit, group_rate_per_ms, keep_completed_ms, keep_dead_ms,
  keep_completed_count, keep_dead_count)
VALUES (:queue, :paused_at, :paused_by, :pause_reason, :concurrency, :rate_limit, :rate_per_ms,
  :group_concurrency, :group_rate_limit, :group_rate_per_ms, :keep_completed_ms, :keep_dead_ms,
  :keep_completed_count, :keep_dead_count)
ON CONFLICT (queue) DO UPDATE SET paused_at = excluded.paused_at, paused_by = excluded.paused_by,
  pause_reason = excluded.pause_reason, concurrency = excluded.concurrency,
  rate_limit = excluded.rate_limit, rate_per_ms = excluded.rate_per_ms,
  group_concurrency = excluded.group_concurrency, group_rate_limit = excluded.group_rate_limit,
  group_rate_per_ms = excluded.group_rate_per_ms, keep_completed_ms = excluded.keep_completed_ms,
  keep_dead_ms = excluded.keep_dead_ms, keep_completed_count = excluded.keep_completed_count,
  keep_dead_count = excluded.keep_dead_count
