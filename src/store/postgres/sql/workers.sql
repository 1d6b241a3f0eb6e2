-- workers: the records that have not expired (the store sorts them by host and pid, which live in
-- the JSON).
-- Params: $1 now (ms or NULL: the server's clock)
-- Returns: info (JSON text), heartbeat_at
-- Uses: workers_expiry; a row per running worker, a few dozen.
SELECT info, heartbeat_at FROM :"schema".workers
WHERE expires_at > coalesce($1::bigint, :"schema".now_ms())
