-- queue control: writes a queue's settings as a change left them (store/kernel/queue-control.ts).
-- Params: :queue, :paused_at, :paused_by, :pause_reason, :concurrency
INSERT INTO ferry_queues (queue, paused_at, paused_by, pause_reason, concurrency)
VALUES (:queue, :paused_at, :paused_by, :pause_reason, :concurrency)
ON CONFLICT (queue) DO UPDATE SET paused_at = excluded.paused_at, paused_by = excluded.paused_by,
  pause_reason = excluded.pause_reason, concurrency = excluded.concurrency
