-- cancel: jobs that have not finished end as dead. An active job's lease is revoked, so its
-- worker's next renew or settle reports 'lease_lost'.
-- Params: $1 id[], $2 last_error (JSON text), $3 now (ms or NULL)
-- Returns: the number of jobs cancelled.
WITH clock AS (SELECT coalesce($3::bigint, :"schema".now_ms()) AS at),
cancelled AS (
  UPDATE :"schema".jobs AS j
  SET state = 'dead', last_error = $2::text, finished_at = clock.at, updated_at = clock.at,
      lease_token = NULL, lease_expires_at = NULL, worker_id = NULL
  FROM clock
  WHERE j.id = ANY($1::bigint[]) AND j.state IN ('scheduled', 'ready', 'active')
  RETURNING 1
)
SELECT count(*)::integer AS count FROM cancelled
