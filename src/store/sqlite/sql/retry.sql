-- retry: a dead job runs again, with a fresh set of attempts. Its last error is kept for reference.
-- A start deadline is dropped: an operator who runs a job again wants it run, whenever that is.
-- Params: :id, :now
-- Returns: queue of the job moved (no row when it was not dead).
UPDATE ferry_jobs
SET state = 'ready', attempts = 0, run_at = :now, finished_at = NULL, result = NULL, expires_at = NULL,
    updated_at = :now
WHERE id = :id AND state = 'dead'
RETURNING queue
