-- enqueue-rows-shared: inserts ENQUEUE_ROWS jobs without unique keys that share every column but
-- their id and payload (one queue, name, priority, run time, max attempts, timeout, group,
-- deadline and meta: what a bulk
-- enqueue of one kind of job gives) in one statement (enqueue-rows.ts). The shared values are bound
-- once, by name, rather than once per row: binding was most of a row's cost, each string copied
-- again for every row (10,000-job transactions: 1.7x the rows per second of enqueue-rows.sql).
-- The connection writes the VALUES tuple of the last line once per row (SqliteConnection.rowsStatement).
-- Params: positional, 2 per row in turn: id (from enqueue-next-id.sql), payload (JSON text); named:
--   :queue, :name, :state ('ready'|'scheduled'), :priority, :run_at, :max_attempts, :timeout_ms,
--   :group_key, :expires_at, :at (created_at and updated_at), :meta
-- Returns: nothing.
INSERT INTO ferry_jobs (id, queue, name, payload, state, priority, run_at, max_attempts, timeout_ms, group_key,
                        expires_at, created_at, updated_at, meta)
VALUES
(?, :queue, :name, ?, :state, :priority, :run_at, :max_attempts, :timeout_ms, :group_key, :expires_at, :at, :at, :meta)
