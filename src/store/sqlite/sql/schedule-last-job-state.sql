-- schedule-last-job-state: the state of a schedule's last fired job, for its overlap policy.
-- Params: :id (the job's)
-- Returns: state, or no row once the job is purged (which counts as finished).
SELECT state FROM ferry_jobs WHERE id = :id
