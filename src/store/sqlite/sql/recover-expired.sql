-- recoverExpired, step 2 (when step 1 found one): active jobs whose lease ran out. The attempt stays counted; with attempts left
-- the job is ready again at its old run_at (its place in line), otherwise it is dead.
-- Params: :now, :limit
-- Returns: id, state of each recovered job.
-- Uses: ferry_jobs_active.
UPDATE ferry_jobs
SET state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'ready' END,
    finished_at = CASE WHEN attempts >= max_attempts THEN :now END,
    last_error = json_object(
      'kind', 'lease_expired',
      'message', 'lease expired: worker ' || coalesce(worker_id, '?') || ' stopped renewing it (attempt '
                 || attempts || ' of ' || max_attempts || ')'),
    lease_token = NULL, lease_expires_at = NULL, worker_id = NULL, updated_at = :now
WHERE id IN (
  SELECT id FROM ferry_jobs
  WHERE state = 'active' AND lease_expires_at <= :now
  ORDER BY lease_expires_at
  LIMIT :limit
)
RETURNING id, state
