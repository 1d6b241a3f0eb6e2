-- cancel: jobs that have not finished end as dead. An active job's lease is revoked, so its
-- worker's next renew or settle reports 'lease_lost'. The waiters of a queue with a concurrency
-- limit or a group concurrency limit (queue control) are woken, as a settlement wakes them: a
-- cancelled job may have left room under the limit.
-- Params: $1 id[], $2 last_error (JSON text), $3 now (ms or NULL)
-- Returns: the number of jobs cancelled.
-- Uses: the primary key; the queues table (small: one row per queue with a setting).
WITH clock AS (SELECT coalesce($3::bigint, :"schema".now_ms()) AS at),
cancelled AS (
  UPDATE :"schema".jobs AS j
  SET state = 'dead', last_error = $2::text, finished_at = clock.at, updated_at = clock.at,
      lease_token = NULL, lease_expires_at = NULL, worker_id = NULL,
      -- A key that frees when its job finishes (or starts) frees when it ends (migration 0016).
      held_unique_key = CASE WHEN j.unique_until IS NULL THEN j.held_unique_key END
  FROM clock
  WHERE j.id = ANY($1::bigint[]) AND j.state IN ('scheduled', 'ready', 'active')
  RETURNING j.queue
),
woken AS (
  SELECT :"schema".wake(array_agg(DISTINCT c.queue), NULL, NULL) FROM cancelled AS c
  WHERE c.queue IN (SELECT q.queue FROM :"schema".queues AS q
                    WHERE q.concurrency IS NOT NULL OR q.group_concurrency IS NOT NULL)
)
SELECT count(*)::integer AS count, (SELECT count(*) FROM woken) AS woken FROM cancelled
