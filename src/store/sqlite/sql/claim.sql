-- claim, step 2, run once per queue in the worker's order until the limit is reached: takes the
-- next ready jobs of one queue and leases them. attempts counts the attempt now, so a worker
-- that dies mid-job has used it. Each row gets its own random lease token.
-- Params: :queue, :limit, :lease_expires_at, :worker_id, :now
-- Returns: the claimed rows, in no particular order (the store sorts them).
-- Uses: ferry_jobs_ready, read in index order: the cost is the rows taken, not the backlog.
UPDATE ferry_jobs
SET state = 'active', attempts = attempts + 1, lease_token = lower(hex(randomblob(12))),
    lease_expires_at = :lease_expires_at, worker_id = :worker_id, updated_at = :now
WHERE id IN (
  SELECT id FROM ferry_jobs
  WHERE state = 'ready' AND queue = :queue
  ORDER BY priority DESC, run_at, id
  LIMIT :limit
)
RETURNING *
