-- queue control: every queue's settings, read by each claim (claim-rows.ts) and by control().
-- Params: none
-- Returns: the rows of ferry_queues (store/kernel/queue-control.ts QueueControlRow), by queue.
-- Uses: the table's primary key; it holds only queues with a setting, so it is small.
SELECT queue, paused_at, paused_by, pause_reason, concurrency, rate_limit, rate_per_ms, group_concurrency,
  group_rate_limit, group_rate_per_ms, keep_completed_ms, keep_dead_ms, keep_completed_count, keep_dead_count
FROM ferry_queues ORDER BY queue
