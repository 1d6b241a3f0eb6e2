-- prune: the queues with finished jobs that their queue's retention governs (jobs without their
-- own keepForMs), per state: one index seek per queue and state (a skip over jobs_retention),
-- whatever the number of jobs.
-- Params: none
-- Returns: state, queue; by state, then queue.
-- Uses: jobs_retention.
WITH RECURSIVE found (state, queue) AS (
  SELECT s.state, (SELECT min(j.queue) FROM :"schema".jobs AS j
                   WHERE j.state = s.state AND j.finished_at IS NOT NULL AND j.keep_for_ms IS NULL)
  FROM (VALUES ('completed'), ('dead')) AS s (state)
  UNION ALL
  SELECT f.state, (SELECT min(j.queue) FROM :"schema".jobs AS j
                   WHERE j.state = f.state AND j.finished_at IS NOT NULL AND j.keep_for_ms IS NULL
                     AND j.queue > f.queue)
  FROM found AS f WHERE f.queue IS NOT NULL
)
SELECT state, queue FROM found WHERE queue IS NOT NULL ORDER BY state, queue
