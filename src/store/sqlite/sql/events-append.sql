-- Appends one job event (EventChannel.append), in the transaction of the batch.
-- Parameters: at, type, job id, queue, name, data (JSON or NULL).
INSERT INTO ferry_events (at, type, job_id, queue, name, data) VALUES (?, ?, ?, ?, ?, ?)
