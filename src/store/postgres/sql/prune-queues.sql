-- prune: the queues with finished jobs that their queue's retention governs (jobs without their
-- own keepForMs), per state, each with its oldest such job: one index seek per queue and state for
-- the name (a skip over jobs_retention) and one for its oldest, whatever the number of jobs; and,
-- on every row, when the first finished job with its own keepForMs runs out (kept_until, NULL for
-- none: one seek of jobs_kept).
-- Params: none
-- Returns: state, queue, finished_at, id (its oldest job's, id as text), kept_until; by state, then
--   queue; one row with a NULL state and queue when no queue has finished jobs.
-- Uses: jobs_retention, jobs_kept.
WITH RECURSIVE found (state, queue) AS (
  SELECT s.state, (SELECT min(j.queue) FROM :"schema".jobs AS j
                   WHERE j.state = s.state AND j.finished_at IS NOT NULL AND j.keep_for_ms IS NULL)
  FROM (VALUES ('completed'), ('dead')) AS s (state)
  UNION ALL
  SELECT f.state, (SELECT min(j.queue) FROM :"schema".jobs AS j
                   WHERE j.state = f.state AND j.finished_at IS NOT NULL AND j.keep_for_ms IS NULL
                     AND j.queue > f.queue)
  FROM found AS f WHERE f.queue IS NOT NULL
),
kept AS (
  SELECT (SELECT j.finished_at + j.keep_for_ms FROM :"schema".jobs AS j
          WHERE j.finished_at IS NOT NULL AND j.keep_for_ms IS NOT NULL
          ORDER BY j.finished_at + j.keep_for_ms
          LIMIT 1) AS kept_until
)
SELECT t.state, t.queue, t.finished_at, t.id::text AS id, kept.kept_until
FROM kept
LEFT JOIN (
  SELECT f.state, f.queue, o.finished_at, o.id
  FROM found AS f
  CROSS JOIN LATERAL (
    SELECT j.finished_at, j.id FROM :"schema".jobs AS j
    WHERE j.state = f.state AND j.queue = f.queue AND j.finished_at IS NOT NULL AND j.keep_for_ms IS NULL
    ORDER BY j.finished_at, j.id
    LIMIT 1
  ) AS o
  WHERE f.queue IS NOT NULL
) AS t ON true
ORDER BY t.state, t.queue
