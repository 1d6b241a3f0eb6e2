-- enqueue: the job holding a unique key.
-- Params: :unique_key
-- Returns: id
-- Uses: ferry_jobs_unique_key.
SELECT id FROM ferry_jobs WHERE unique_key = :unique_key
