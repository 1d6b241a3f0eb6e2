-- settle: the attempt failed and another follows at :run_at (the worker's backoff), or the job is
-- snoozed (:attempts_back = 1 gives the attempt back). Fenced by the lease token.
-- Params: :id, :lease_token, :state ('ready' if :run_at <= :now, else 'scheduled'), :run_at,
--         :last_error (JSON text, or NULL to keep the previous one), :attempts_back (0 or 1), :now,
--         :progress and :logs (JSON text, or NULL to keep the stored one: renew.sql)
-- Returns: nothing; changes = 0 means the lease was lost.
UPDATE ferry_jobs
SET state = :state, run_at = :run_at, last_error = coalesce(:last_error, last_error),
    attempts = attempts - :attempts_back, updated_at = :now,
    progress = coalesce(:progress, progress), logs = coalesce(:logs, logs),
    lease_token = NULL, lease_expires_at = NULL, worker_id = NULL
WHERE id = :id AND state = 'active' AND lease_token = :lease_token
