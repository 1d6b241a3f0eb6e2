-- recoverExpired with clampLeases, first: leases renewed at a later time than now, which only a server clock that went back
-- can show, each moved to expire its own length from now. Without this, a worker that died just
-- after a backward step would keep its job until the clock caught up (an hour's step: an hour).
-- Params: $1 now (ms or NULL)
-- Returns: the number of leases moved.
-- Uses: jobs_active (every active job: the recoverer runs it at start and after a step only).
WITH clock AS (SELECT coalesce($1::bigint, :"schema".now_ms()) AS at),
clamped AS (
  UPDATE :"schema".jobs AS j
  SET lease_expires_at = clock.at + (j.lease_expires_at - j.updated_at), updated_at = clock.at
  FROM clock
  WHERE j.state = 'active' AND j.updated_at > clock.at
  RETURNING 1
)
SELECT count(*)::integer AS count FROM clamped
