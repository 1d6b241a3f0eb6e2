-- recoverExpired with expireJobs: jobs not started by their start deadline end dead (cause
-- 'expired', kernel EXPIRED_ERROR) without ever running, attempts unchanged, in every queue:
-- those of a paused queue, or of a queue no running worker claims, which no claim ends
-- (functions/claim.sql ends its own queues' only). Earliest deadline first; SKIP LOCKED, so
-- sweeps on several workers, and claims, each end their own.
-- Params: $1 now (ms or NULL), $2 limit, $3 last_error (the expired error's JSON text)
-- Returns: id (text) of each job ended.
-- Uses: jobs_deadline (migration 0013): only unstarted jobs with a deadline.
WITH clock AS (SELECT coalesce($1::bigint, :"schema".now_ms()) AS at)
UPDATE :"schema".jobs AS j
SET state = 'dead', last_error = $3::text, finished_at = clock.at, updated_at = clock.at,
    -- A key that frees when its job finishes (or starts) frees when it ends (migration 0016).
    held_unique_key = CASE WHEN j.unique_until IS NULL THEN j.held_unique_key END
FROM clock
WHERE j.id = ANY (ARRAY(
  SELECT e.id FROM :"schema".jobs AS e
  -- A scalar subquery: a bound the index scan starts from (sql/find-expired-leases.sql).
  WHERE e.expires_at <= (SELECT c.at FROM clock AS c) AND e.state IN ('ready', 'scheduled')
  ORDER BY e.expires_at
  LIMIT $2::integer
  FOR UPDATE SKIP LOCKED
))
RETURNING j.id::text AS id
