-- queue control: one queue's settings, read before a change inside the change's transaction.
-- Params: :queue
-- Returns: its row, or none when the queue has no setting.
SELECT queue, paused_at, paused_by, pause_reason, concurrency, rate_limit, rate_per_ms, group_concurrency,
  group_rate_limit, group_rate_per_ms, keep_completed_ms, keep_dead_ms, keep_completed_count, keep_dead_count
FROM ferry_queues WHERE queue = :queue
