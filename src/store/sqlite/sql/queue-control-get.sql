-- queue control: one queue's settings, read before a change inside the change's transaction.
-- Params: :queue
-- Returns: its row, or none when the queue has no setting.
SELECT queue, paused_at, paused_by, pause_reason, concurrency FROM ferry_queues WHERE queue = :queue
