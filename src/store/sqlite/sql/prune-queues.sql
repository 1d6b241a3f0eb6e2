-- prune: the queues with finished jobs of a state that their queue's retention governs (jobs
-- without their own keepForMs), by name, each with its oldest such job: one seek per queue for
-- the name (a skip over ferry_jobs_retention) and one for its oldest, whatever the number of jobs.
-- Params: :state ('completed'|'dead')
-- Returns: queue, finished_at, id (its oldest job's), one row per queue.
-- Uses: ferry_jobs_retention.
WITH RECURSIVE queues (queue) AS (
  SELECT min(queue) FROM ferry_jobs
  WHERE state = :state AND finished_at IS NOT NULL AND keep_for_ms IS NULL
  UNION ALL
  SELECT (SELECT min(j.queue) FROM ferry_jobs AS j
          WHERE j.state = :state AND j.finished_at IS NOT NULL AND j.keep_for_ms IS NULL AND j.queue > queues.queue)
  FROM queues WHERE queues.queue IS NOT NULL
)
SELECT q.queue, o.finished_at, o.id
FROM queues AS q
JOIN ferry_jobs AS o ON o.id = (
  SELECT j.id FROM ferry_jobs AS j
  WHERE j.state = :state AND j.queue = q.queue AND j.finished_at IS NOT NULL AND j.keep_for_ms IS NULL
  ORDER BY j.finished_at, j.id
  LIMIT 1
)
WHERE q.queue IS NOT NULL
