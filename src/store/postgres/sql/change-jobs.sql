-- changeJobs: jobs that have not started (scheduled or ready) change. Each field given replaces the
-- job's (a NULL entry keeps it); a new run time sets the state: ready at or before now, else
-- scheduled (kernel/change-jobs.ts stateAfterChange). Wakes the waiters of queues where a job is
-- now ready, and tells them of a job that now waits for its run time, as an enqueue does.
-- Locking: the UPDATE locks each row it changes. A claim that holds a row (FOR UPDATE SKIP LOCKED)
-- makes it wait until the claim commits, and then sees the job active and leaves it: a job is never
-- changed under a lease. A row this UPDATE holds is skipped by claims until it commits.
-- Params: $1 id[], $2 priority[], $3 run_at[], $4 payload[] (JSON text), $5 max_attempts[] (arrays
--         of one entry per change, in order), $6 now (ms or NULL)
-- Returns: one row per change, in order: result ('ok', 'not_found' or 'not_changeable').
-- Uses: the primary key.
WITH clock AS (SELECT coalesce($6::bigint, :"schema".now_ms()) AS at),
asked AS (
  SELECT a.id, a.priority, a.run_at, a.payload, a.max_attempts, a.n
  FROM unnest($1::bigint[], $2::integer[], $3::bigint[], $4::text[], $5::integer[]) WITH ORDINALITY
    AS a(id, priority, run_at, payload, max_attempts, n)
),
changed AS (
  UPDATE :"schema".jobs AS j
  SET priority = coalesce(a.priority, j.priority), run_at = coalesce(a.run_at, j.run_at),
      state = CASE WHEN a.run_at IS NULL THEN j.state WHEN a.run_at <= clock.at THEN 'ready' ELSE 'scheduled' END,
      payload = coalesce(a.payload, j.payload), max_attempts = coalesce(a.max_attempts, j.max_attempts),
      updated_at = clock.at
  FROM asked AS a, clock
  WHERE j.id = a.id AND j.state IN ('scheduled', 'ready')
  RETURNING j.id, j.queue, j.state, j.run_at, a.run_at IS NOT NULL AS moved
),
woken AS (
  SELECT :"schema".wake(
    array_agg(DISTINCT c.queue) FILTER (WHERE c.moved AND c.state = 'ready'),
    array_agg(c.queue) FILTER (WHERE c.moved AND c.state = 'scheduled'),
    array_agg(c.run_at) FILTER (WHERE c.moved AND c.state = 'scheduled')
  ) FROM changed AS c
)
SELECT CASE
         WHEN c.id IS NOT NULL THEN 'ok'
         WHEN EXISTS (SELECT 1 FROM :"schema".jobs AS j WHERE j.id = a.id) THEN 'not_changeable'
         ELSE 'not_found'
       END AS result,
       (SELECT count(*) FROM woken) AS woken
FROM asked AS a LEFT JOIN changed AS c ON c.id = a.id
ORDER BY a.n
