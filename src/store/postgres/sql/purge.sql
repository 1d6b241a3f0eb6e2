-- purge: deletes finished jobs, a bounded chunk per statement so no transaction grows without limit.
-- Params: $1 state ('completed'|'dead'), $2 older_than_ms, $3 queue (or NULL), $4 limit, $5 now (ms or NULL)
-- Returns: the number of jobs deleted.
-- Uses: jobs_finished.
WITH clock AS (SELECT coalesce($5::bigint, :"schema".now_ms()) AS at),
deleted AS (
  DELETE FROM :"schema".jobs
  WHERE id IN (
    SELECT j.id FROM :"schema".jobs AS j, clock
    WHERE j.state = $1::text AND j.finished_at IS NOT NULL AND j.finished_at <= clock.at - $2::bigint
      AND ($3::text IS NULL OR j.queue = $3::text)
    LIMIT $4::integer
  )
  RETURNING 1
)
SELECT count(*)::integer AS count FROM deleted
