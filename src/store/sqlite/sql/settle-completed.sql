-- settle: the attempt succeeded. Fenced: only the holder of the current lease may settle.
-- Params: :id, :lease_token, :result (JSON text or NULL), :now,
--         :progress and :logs (JSON text, or NULL to keep the stored one: renew.sql)
-- Returns: nothing; changes = 0 means the lease was lost.
UPDATE ferry_jobs
SET state = 'completed', result = :result, finished_at = :now, updated_at = :now,
    progress = coalesce(:progress, progress), logs = coalesce(:logs, logs),
    lease_token = NULL, lease_expires_at = NULL, worker_id = NULL
WHERE id = :id AND state = 'active' AND lease_token = :lease_token
