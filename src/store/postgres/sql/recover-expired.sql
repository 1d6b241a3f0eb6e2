-- recoverExpired: active jobs whose lease ran out. The attempt stays counted; with attempts left the
-- job is ready again at its old run_at (its place in line), otherwise it is dead. Safe on every
-- worker at once: SKIP LOCKED hands each expired job to one sweep, and the others pass over it.
-- The usual answer (nothing expired) is one probe of jobs_active and writes nothing.
-- Params: $1 now (ms or NULL), $2 limit
-- Returns: id (text), state of each recovered job; wakes the workers of the queues made ready.
-- Uses: jobs_active.
WITH clock AS (SELECT coalesce($1::bigint, :"schema".now_ms()) AS at),
expired AS (
  SELECT j.id FROM :"schema".jobs AS j, clock
  WHERE j.state = 'active' AND j.lease_expires_at <= clock.at
  ORDER BY j.lease_expires_at
  LIMIT $2::integer
  FOR UPDATE OF j SKIP LOCKED
),
recovered AS (
  UPDATE :"schema".jobs AS j
  SET state = CASE WHEN j.attempts >= j.max_attempts THEN 'dead' ELSE 'ready' END,
      finished_at = CASE WHEN j.attempts >= j.max_attempts THEN clock.at END,
      last_error = json_build_object(
        'kind', 'lease_expired',
        'message', 'lease expired: worker ' || coalesce(j.worker_id, '?') || ' stopped renewing it (attempt '
                   || j.attempts || ' of ' || j.max_attempts || ')')::text,
      lease_token = NULL, lease_expires_at = NULL, worker_id = NULL, updated_at = clock.at
  FROM clock
  -- By primary key whatever the estimates (a join to the CTE may be planned as a hash join over a
  -- sequential scan of the table, this statement being prepared once with a generic plan).
  WHERE j.id = ANY (ARRAY(SELECT e.id FROM expired AS e))
  RETURNING j.id, j.state, j.queue
),
woken AS (
  SELECT :"schema".wake(array_agg(DISTINCT r.queue), NULL, NULL) FROM recovered AS r WHERE r.state = 'ready'
)
SELECT r.id::text AS id, r.state, (SELECT count(*) FROM woken) AS woken FROM recovered AS r
