-- recover_expired: leases that ran out go back. With p_id NULL: any of them, oldest expiry first,
-- at most p_limit; else only the leases given, each if still exactly as seen (token and expiry)
-- and run out: the worker's recoverer reads the expired leases first (sql/find-expired-leases.sql)
-- and judges the server's clock against its own monotonic one, so a forward step of the clock does
-- not take every running job from its healthy worker. A job that was only delivered (its waiter
-- never took it) is ready again with its attempt given back and its last error kept: it never
-- ran. Otherwise the attempt stays counted; with attempts left the job is ready again at its old
-- run_at (its place in line), else dead.
-- Safe on every worker at once: SKIP LOCKED hands each job to one sweep, the others pass over it.
-- Parameters: p_now (ms or NULL), p_limit, p_id[] (or NULL: any expired lease), p_lease_token[],
--             p_lease_expires_at[].
-- Returns: id, state of each recovered job; wakes the workers of the queues made ready, and of
--          the queues with a concurrency limit or a group concurrency limit (queue control) whose
--          jobs it took back, dead ones too: their waiters may have room again.
-- Relies on: jobs_active (lease-expiry order) or the primary key; FOR UPDATE SKIP LOCKED; the
--            queues table (small), read once.
-- Settings: jit = off, enable_seqscan = off (README.md).
CREATE OR REPLACE FUNCTION :"schema".recover_expired(
  p_now bigint, p_limit integer, p_id bigint[], p_lease_token text[], p_lease_expires_at bigint[]
) RETURNS TABLE (id bigint, state text)
LANGUAGE plpgsql SET jit = off SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  at bigint := coalesce(p_now, :"schema".now_ms());
  expired bigint[];
  ready_queues text[];
BEGIN
  IF p_id IS NULL THEN
    expired := ARRAY(
      SELECT j.id FROM :"schema".jobs AS j
      WHERE j.state = 'active' AND j.lease_expires_at <= at
      ORDER BY j.lease_expires_at
      LIMIT p_limit
      FOR UPDATE SKIP LOCKED
    );
  ELSE
    expired := ARRAY(
      SELECT j.id
      FROM unnest(p_id, p_lease_token, p_lease_expires_at) AS l(id, lease_token, lease_expires_at)
      JOIN :"schema".jobs AS j ON j.id = l.id
      WHERE j.id = ANY (p_id) AND j.state = 'active' AND j.lease_token = l.lease_token
        AND j.lease_expires_at = l.lease_expires_at AND j.lease_expires_at <= at
      FOR UPDATE OF j SKIP LOCKED
    );
  END IF;
  RETURN QUERY
  WITH recovered AS (
    UPDATE :"schema".jobs AS j
    SET state = CASE WHEN NOT j.delivered AND j.attempts >= j.max_attempts THEN 'dead' ELSE 'ready' END,
        attempts = j.attempts - CASE WHEN j.delivered THEN 1 ELSE 0 END,
        finished_at = CASE WHEN NOT j.delivered AND j.attempts >= j.max_attempts THEN at END,
        -- A key that frees when its job finishes frees when it ends dead (migration 0016).
        held_unique_key = CASE WHEN NOT j.delivered AND j.attempts >= j.max_attempts AND j.unique_until IS NOT NULL
                                 THEN NULL
                               ELSE j.held_unique_key END,
        last_error = CASE
                       WHEN j.delivered THEN j.last_error
                       ELSE json_build_object(
                              'kind', 'lease_expired',
                              'message', 'lease expired: worker ' || coalesce(j.worker_id, '?')
                                         || ' stopped renewing it (attempt ' || j.attempts || ' of '
                                         || j.max_attempts || ')')::text
                     END,
        lease_token = NULL, lease_expires_at = NULL, worker_id = NULL, delivered = false, updated_at = at
    -- By primary key whatever the estimates (this runs with a generic plan).
    WHERE j.id = ANY (expired)
    RETURNING j.id, j.state, j.queue
  ), woken AS (
    SELECT :"schema".wake(array_agg(DISTINCT r.queue), NULL, NULL) FROM recovered AS r
    WHERE r.state = 'ready'
       OR r.queue IN (SELECT c.queue FROM :"schema".queues AS c
                      WHERE c.concurrency IS NOT NULL OR c.group_concurrency IS NOT NULL)
  )
  SELECT r.id, r.state FROM recovered AS r, (SELECT count(*) FROM woken) AS w;
END
$$;
