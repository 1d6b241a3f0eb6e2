-- retry with allDead: every dead job (of one queue, if given) runs again with fresh attempts.
-- A start deadline is dropped: an operator who runs a job again wants it run, whenever that is.
-- Params: :queue (or NULL), :now
-- Returns: queue of each job moved.
-- Uses: ferry_jobs_finished (state = 'dead').
UPDATE ferry_jobs
SET state = 'ready', attempts = 0, run_at = :now, finished_at = NULL, result = NULL, expires_at = NULL,
    updated_at = :now
WHERE state = 'dead' AND finished_at IS NOT NULL AND (:queue IS NULL OR queue = :queue)
RETURNING queue
