-- enqueue: the job holding a unique key, and when a throttle's hold of it ends.
-- Params: :unique_key
-- Returns: id, unique_expires_at (NULL: it holds until its mode's transition)
-- Uses: ferry_jobs_held_unique_key.
SELECT id, unique_expires_at FROM ferry_jobs WHERE held_unique_key = :unique_key
