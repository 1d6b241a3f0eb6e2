-- cancel: a job that has not finished ends as dead. An active job's lease is revoked, so its
-- worker's next renew or settle reports 'lease_lost'.
-- Params: :id, :last_error (JSON text), :now
-- Returns: nothing; changes = 0 means the job had already finished or does not exist.
UPDATE ferry_jobs
SET state = 'dead', last_error = :last_error, finished_at = :now, updated_at = :now,
    lease_token = NULL, lease_expires_at = NULL, worker_id = NULL
WHERE id = :id AND state IN ('scheduled', 'ready', 'active')
