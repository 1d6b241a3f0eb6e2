-- findExpiredLeases: active jobs whose lease ran out, oldest expiry first, with what fences their
-- recovery (token and expiry) and each lease's length (a claim, a renewal and a take set updated_at
-- to the instant they set the lease from), and the server's clock; and whether some job that has not
-- started is past its start deadline (then recoverExpired with expireJobs ends it). Read only.
-- Params: $1 now (ms or NULL), $2 limit
-- Returns: at least one row: now and next_expires_at (the next lease that has not run out yet, or
--          NULL), start_deadlines_passed (boolean), then id, lease_token, lease_expires_at, lease_ms
--          (all text; all NULL in the one row when nothing expired).
-- Uses: jobs_active, read in expiry order, and one seek past now for the next expiry; one seek of
--       jobs_deadline (migration 0013: only unstarted jobs with a deadline) for the deadlines.
WITH clock AS (SELECT coalesce($1::bigint, :"schema".now_ms()) AS at),
expired AS (
  SELECT j.id, j.lease_token, j.lease_expires_at, j.lease_expires_at - j.updated_at AS lease_ms
  FROM :"schema".jobs AS j
  -- A scalar subquery, not a join with clock: a bound the index scan can start from, where a
  -- joined column is only a filter over every active job.
  WHERE j.state = 'active' AND j.lease_expires_at <= (SELECT clock.at FROM clock)
  ORDER BY j.lease_expires_at
  LIMIT $2::integer
)
SELECT clock.at::text AS now,
       (SELECT min(j.lease_expires_at) FROM :"schema".jobs AS j
        WHERE j.state = 'active' AND j.lease_expires_at > clock.at)::text AS next_expires_at,
       -- The earliest deadline, read off the end of jobs_deadline (its own WHERE, so the index is
       -- the plan whatever the statistics): an EXISTS with the bound read the whole table at 2,000
       -- jobs without deadlines (bench postgres-plans).
       coalesce((SELECT min(j.expires_at) FROM :"schema".jobs AS j
                 WHERE j.expires_at IS NOT NULL AND j.state IN ('ready', 'scheduled')) <= clock.at, false)
         AS start_deadlines_passed,
       e.id::text AS id, e.lease_token, e.lease_expires_at::text AS lease_expires_at, e.lease_ms::text AS lease_ms
FROM clock LEFT JOIN expired AS e ON true
ORDER BY e.lease_expires_at
