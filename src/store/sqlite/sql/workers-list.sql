-- workers: the records that have not expired by :now (the store sorts them by host and pid,
-- which live in the JSON).
-- Params: :now
-- Returns: info (JSON text), heartbeat_at
-- Uses: ferry_workers_expiry; a row per running worker, a few dozen.
SELECT info, heartbeat_at FROM ferry_workers WHERE expires_at > :now
