-- enqueue: inserts one job; a job whose unique key is taken is not inserted.
-- Its id is the next one, found here as enqueue-next-id.sql finds it (one above every id in the
-- table and every id a purge may have deleted), and read back as the insert's rowid: a serial
-- enqueue runs one statement instead of two.
-- Params (positional: binding an object by name measured 22% slower per row, the largest cost here):
--   1 queue, 2 name, 3 payload (JSON text), 4 state ('ready'|'scheduled'), 5 priority, 6 run_at,
--   7 max_attempts, 8 timeout_ms, 9 unique_key, 10 group_key, 11 expires_at, 12 created_at,
--   13 updated_at (both now), 14 meta (JSON text or null), 15 held_unique_key (the unique key
--   again: the key while it holds, migrations/0010_unique_modes.sql), 16 unique_until
--   ('finished'|'started' or null), 17 unique_expires_at (a throttle's end or null)
-- Returns: nothing; lastInsertRowid is the new job's id; changes = 0 when the unique key is already
--          held (then run enqueue-find-unique.sql), and no id is used.
-- Uses: the table's rowid (its last row), ferry_ids' one row, ferry_jobs_held_unique_key for the conflict.
INSERT INTO ferry_jobs (id, queue, name, payload, state, priority, run_at, max_attempts, timeout_ms, unique_key,
                        group_key, expires_at, created_at, updated_at, meta, held_unique_key, unique_until,
                        unique_expires_at)
VALUES ((SELECT max(coalesce((SELECT max(id) FROM ferry_jobs), 0), (SELECT purged_up_to FROM ferry_ids)) + 1),
        ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (held_unique_key) WHERE held_unique_key IS NOT NULL DO NOTHING
