-- enqueue: inserts one job; a job whose unique key is taken is not inserted.
-- Params: :queue, :name, :payload (JSON text), :state ('ready'|'scheduled'), :priority, :run_at,
--         :max_attempts, :timeout_ms, :unique_key, :now
-- Returns: id, or no row when the unique key is already held (then run enqueue-find-unique.sql).
-- Uses: ferry_jobs_unique_key for the conflict check.
INSERT INTO ferry_jobs (queue, name, payload, state, priority, run_at, max_attempts, timeout_ms, unique_key,
                        created_at, updated_at)
VALUES (:queue, :name, :payload, :state, :priority, :run_at, :max_attempts, :timeout_ms, :unique_key, :now, :now)
ON CONFLICT (unique_key) WHERE unique_key IS NOT NULL DO NOTHING
RETURNING id
