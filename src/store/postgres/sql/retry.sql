-- retry: dead jobs run again with a fresh set of attempts, the ones given by id or (allDead) every
-- dead job, of one queue if given. Their last error is kept for reference. Wakes their workers.
-- A start deadline is dropped: an operator who runs a job again wants it run, whenever that is.
-- Params: $1 id[] (or NULL for every dead job), $2 queue (or NULL), $3 now (ms or NULL)
-- Returns: the number of jobs moved.
-- Uses: the primary key for ids; jobs_finished (state = 'dead') for every dead job.
WITH clock AS (SELECT coalesce($3::bigint, :"schema".now_ms()) AS at),
moved AS (
  UPDATE :"schema".jobs AS j
  SET state = 'ready', attempts = 0, run_at = clock.at, finished_at = NULL, result = NULL, expires_at = NULL,
      updated_at = clock.at
  FROM clock
  WHERE j.state = 'dead' AND j.finished_at IS NOT NULL
    AND ($1::bigint[] IS NULL OR j.id = ANY($1::bigint[]))
    AND ($2::text IS NULL OR j.queue = $2::text)
  RETURNING j.queue
),
woken AS (SELECT :"schema".wake(array_agg(DISTINCT m.queue), NULL, NULL) FROM moved AS m)
SELECT count(*)::integer AS count, (SELECT count(*) FROM woken) AS woken FROM moved
