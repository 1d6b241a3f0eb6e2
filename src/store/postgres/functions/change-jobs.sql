-- change_jobs: jobs that have not started (scheduled or ready) change. Each field given replaces the
-- job's (a NULL entry keeps it); a new run time sets the state: ready at or before now, else
-- scheduled (kernel/change-jobs.ts stateAfterChange). Wakes the waiters of queues where a job is
-- now ready, and tells them of a job that now waits for its run time, as an enqueue does. A
-- function, so that changeJobs (../sql/change-jobs.sql) and a debounced enqueue (enqueue_batch,
-- which moves the waiting job that holds its key) change a job the one way.
-- Locking: the UPDATE locks each row it changes. A claim that holds a row (FOR UPDATE SKIP LOCKED)
-- makes it wait until the claim commits, and then sees the job active and leaves it: a job is never
-- changed under a lease. A row this UPDATE holds is skipped by claims until it commits.
-- Parameters: p_id[], p_priority[], p_run_at[], p_payload[] (JSON text), p_max_attempts[] (arrays
--             of one entry per change, in order; each but p_id may be NULL as a whole), p_now (ms,
--             or NULL for the server's clock)
-- Returns: one row per change, in order: result ('ok', 'not_found' or 'not_changeable').
-- Relies on: the primary key.
-- Settings: jit = off, enable_seqscan = off (README.md).
CREATE OR REPLACE FUNCTION :"schema".change_jobs(
  p_id bigint[], p_priority integer[], p_run_at bigint[], p_payload text[], p_max_attempts integer[], p_now bigint
) RETURNS TABLE (result text)
LANGUAGE plpgsql SET jit = off SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  at bigint := coalesce(p_now, :"schema".now_ms());
BEGIN
  RETURN QUERY
  WITH asked AS (
    SELECT a.id, a.priority, a.run_at, a.payload, a.max_attempts, a.n
    FROM unnest(p_id, p_priority, p_run_at, p_payload, p_max_attempts) WITH ORDINALITY
      AS a(id, priority, run_at, payload, max_attempts, n)
  ),
  changed AS (
    UPDATE :"schema".jobs AS j
    SET priority = coalesce(a.priority, j.priority), run_at = coalesce(a.run_at, j.run_at),
        state = CASE WHEN a.run_at IS NULL THEN j.state WHEN a.run_at <= at THEN 'ready' ELSE 'scheduled' END,
        payload = coalesce(a.payload, j.payload), max_attempts = coalesce(a.max_attempts, j.max_attempts),
        updated_at = at
    FROM asked AS a
    WHERE j.id = a.id AND j.state IN ('scheduled', 'ready')
    RETURNING j.id, j.queue, j.state, j.run_at, a.run_at IS NOT NULL AS moved
  ),
  woken AS (
    SELECT :"schema".wake(
      array_agg(DISTINCT c.queue) FILTER (WHERE c.moved AND c.state = 'ready'),
      array_agg(c.queue) FILTER (WHERE c.moved AND c.state = 'scheduled'),
      array_agg(c.run_at) FILTER (WHERE c.moved AND c.state = 'scheduled')
    ) FROM changed AS c
  ),
  -- Referenced, so that the wake-up runs: a CTE that only reads runs only if it is read.
  answered AS (
    SELECT a.n,
           CASE
             WHEN c.id IS NOT NULL THEN 'ok'
             WHEN EXISTS (SELECT 1 FROM :"schema".jobs AS j WHERE j.id = a.id) THEN 'not_changeable'
             ELSE 'not_found'
           END AS result
    FROM asked AS a LEFT JOIN changed AS c ON c.id = a.id
    WHERE (SELECT count(*) FROM woken) >= 0
  )
  SELECT x.result FROM answered AS x ORDER BY x.n;
END
$$;
