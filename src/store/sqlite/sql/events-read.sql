-- Events after a cursor, oldest first (the primary key). Parameters: seq, limit.
SELECT seq, at, type, job_id, queue, name, data FROM ferry_events WHERE seq > ? ORDER BY seq LIMIT ?
