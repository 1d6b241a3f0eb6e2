-- enqueue-rows: inserts ENQUEUE_ROWS jobs without unique keys in one statement (enqueue-rows.ts):
-- a bulk enqueue's cost per job was mostly the statement run per row. The connection writes the
-- VALUES tuple of the last line once per row (SqliteConnection.rowsStatement).
-- Params (positional), 10 per row in turn: queue, name, payload (JSON text), state
--   ('ready'|'scheduled'), priority, run_at, max_attempts, timeout_ms, created_at, updated_at
-- Returns: nothing; the rows take consecutive ids ending at the last insert rowid (one statement
--   under the write lock, each row one past the highest id the table ever had: AUTOINCREMENT).
INSERT INTO ferry_jobs (queue, name, payload, state, priority, run_at, max_attempts, timeout_ms, created_at,
                        updated_at)
VALUES
(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
