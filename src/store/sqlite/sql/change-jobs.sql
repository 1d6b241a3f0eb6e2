-- changeJobs: one job that has not started (scheduled or ready) changes. Each field given replaces
-- the job's (NULL keeps it); a new run time sets the state (:state: kernel/change-jobs.ts
-- stateAfterChange; NULL keeps it). It runs in a write transaction, which no claim can come into:
-- a job a claim took first is active, and left as it is.
-- Params: :id, :priority, :run_at, :state, :payload (JSON text), :max_attempts, :now
-- Returns: the job's queue when it changed; no row when it has started or finished, or does not exist.
-- Uses: the primary key. The ready indexes order by priority and run time, so the job's entry
-- moves to its new place in line with the row.
UPDATE ferry_jobs
SET priority = coalesce(:priority, priority), run_at = coalesce(:run_at, run_at), state = coalesce(:state, state),
    payload = coalesce(:payload, payload), max_attempts = coalesce(:max_attempts, max_attempts),
    updated_at = :now
WHERE id = :id AND state IN ('scheduled', 'ready')
RETURNING queue
