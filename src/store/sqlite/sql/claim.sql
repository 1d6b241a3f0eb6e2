-- claim, step 3: leases the jobs chosen by claim-next-named.sql, all queues at
-- once. attempts counts the attempt now, so a worker that dies mid-job has used it. Each row gets
-- its own token: the claim's random base (store/kernel/lease-tokens.ts) and the job's id. A job past
-- its start deadline is never leased.
-- Params: :ids (JSON array of ids), :token_base, :lease_expires_at, :worker_id, :now
-- Returns: the claimed rows, in no particular order (the store restores the claim order).
UPDATE ferry_jobs
SET state = 'active', attempts = attempts + 1, lease_token = :token_base || '.' || id,
    lease_expires_at = :lease_expires_at, worker_id = :worker_id, updated_at = :now
WHERE id IN (SELECT value FROM json_each(:ids)) AND state = 'ready'
  -- claim-expire.sql ended the expired jobs, up to its limit: one beyond it is left, not run.
  AND (expires_at IS NULL OR expires_at > :now)
RETURNING *
