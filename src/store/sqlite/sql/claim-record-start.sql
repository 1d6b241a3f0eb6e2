-- claim of a queue with a rate or a group rate: a job it leased starts now, in the windows.
-- Params: :queue, :started_at, :job_id, :group_key ('' for a job without a group)
INSERT INTO ferry_queue_starts (queue, started_at, job_id, group_key)
VALUES (:queue, :started_at, :job_id, :group_key)
