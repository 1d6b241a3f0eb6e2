-- prune: the queues with finished jobs of a state that their queue's retention governs (jobs
-- without their own keepForMs), by name: one seek per queue (a skip over ferry_jobs_retention),
-- whatever the number of jobs.
-- Params: :state ('completed'|'dead')
-- Returns: queue, one row per queue.
-- Uses: ferry_jobs_retention.
WITH RECURSIVE queues (queue) AS (
  SELECT min(queue) FROM ferry_jobs
  WHERE state = :state AND finished_at IS NOT NULL AND keep_for_ms IS NULL
  UNION ALL
  SELECT (SELECT min(j.queue) FROM ferry_jobs AS j
          WHERE j.state = :state AND j.finished_at IS NOT NULL AND j.keep_for_ms IS NULL AND j.queue > queues.queue)
  FROM queues WHERE queues.queue IS NOT NULL
)
SELECT queue FROM queues WHERE queue IS NOT NULL
