-- enqueue-rows: inserts ENQUEUE_ROWS jobs without unique keys in one statement (enqueue-rows.ts):
-- a bulk enqueue's cost per job was mostly the statement run per row. The connection writes the
-- VALUES tuple of the last line once per row (SqliteConnection.rowsStatement).
-- Params (positional), 14 per row in turn: id (from enqueue-next-id.sql), queue, name, payload
--   (JSON text), state ('ready'|'scheduled'), priority, run_at, max_attempts, timeout_ms,
--   group_key, expires_at, created_at, updated_at, meta (JSON text or null)
-- Returns: nothing.
INSERT INTO ferry_jobs (id, queue, name, payload, state, priority, run_at, max_attempts, timeout_ms, group_key,
                        expires_at, created_at, updated_at, meta)
VALUES
(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
