-- recoverExpired: the leases given (found by find-expired-leases.sql), each only if it is still
-- exactly as seen (the same token and expiry: not renewed, not claimed again since) and has run
-- out. The attempt stays counted; with attempts left the job is ready again at its old run_at (its
-- place in line), otherwise it is dead.
-- Params: :leases (JSON array of {"id", "token", "expiresAt"}), :now
-- Returns: id, state of each recovered job.
-- Uses: the primary key.
UPDATE ferry_jobs
SET state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'ready' END,
    finished_at = CASE WHEN attempts >= max_attempts THEN :now END,
    last_error = json_object(
      'kind', 'lease_expired',
      'message', 'lease expired: worker ' || coalesce(worker_id, '?') || ' stopped renewing it (attempt '
                 || attempts || ' of ' || max_attempts || ')'),
    lease_token = NULL, lease_expires_at = NULL, worker_id = NULL, updated_at = :now
WHERE id IN (
  SELECT j.id
  FROM json_each(:leases) AS l
  JOIN ferry_jobs AS j ON j.id = l.value ->> 'id'
  WHERE j.state = 'active' AND j.lease_token = l.value ->> 'token'
    AND j.lease_expires_at = l.value ->> 'expiresAt' AND j.lease_expires_at <= :now
)
RETURNING id, state
