-- claim of a queue with a concurrency limit: how many of its jobs hold a live lease (one that has
-- not run out), delivered or claimed, whoever holds them: the room left is the limit minus this.
-- Params: :queue, :now
-- Returns: the count.
-- Uses: ferry_jobs_active (lease_expires_at, every queue's active jobs): the cost is the live
-- leases of the whole store, read only for a limited queue. No index of its own, which every
-- claim and settle of every queue would have to keep up.
SELECT count(*) FROM ferry_jobs INDEXED BY ferry_jobs_active
WHERE state = 'active' AND lease_expires_at > :now AND queue = :queue
