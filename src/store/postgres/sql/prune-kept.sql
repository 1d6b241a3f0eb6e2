-- prune: deletes finished jobs whose own keepForMs has run out, earliest first, a batch at most.
-- Rows locked elsewhere are passed over (SKIP LOCKED), as prune.sql does.
-- Params: $1 now (ms), $2 limit
-- Returns: the number of jobs deleted.
-- Uses: jobs_kept (a range from its start: nothing is read past the jobs deleted).
WITH deleted AS (
  DELETE FROM :"schema".jobs
  WHERE id IN (
    SELECT j.id FROM :"schema".jobs AS j
    WHERE j.finished_at IS NOT NULL AND j.keep_for_ms IS NOT NULL AND j.finished_at + j.keep_for_ms <= $1::bigint
    ORDER BY j.finished_at + j.keep_for_ms
    LIMIT $2::integer
    FOR UPDATE SKIP LOCKED
  )
  RETURNING 1
)
SELECT count(*)::integer AS count FROM deleted
