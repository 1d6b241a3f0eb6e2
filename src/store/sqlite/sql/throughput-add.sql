-- heartbeat: adds a worker's count of one minute and queue to the count kept.
-- Params: :minute, :queue, :completed, :failed
-- Uses: ferry_throughput's primary key (minute, queue).
INSERT INTO ferry_throughput (minute, queue, completed, failed)
VALUES (:minute, :queue, :completed, :failed)
ON CONFLICT (minute, queue) DO UPDATE SET completed = completed + excluded.completed,
  failed = failed + excluded.failed
