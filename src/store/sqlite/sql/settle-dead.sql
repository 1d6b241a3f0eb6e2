-- settle: the job failed for good. Fenced by the lease token.
-- Params: :id, :lease_token, :last_error (JSON text), :now,
--         :progress and :logs (JSON text, or NULL to keep the stored one: renew.sql)
-- Returns: nothing; changes = 0 means the lease was lost.
UPDATE ferry_jobs
SET state = 'dead', last_error = :last_error, finished_at = :now, updated_at = :now,
    progress = coalesce(:progress, progress), logs = coalesce(:logs, logs),
    lease_token = NULL, lease_expires_at = NULL, worker_id = NULL
WHERE id = :id AND state = 'active' AND lease_token = :lease_token
