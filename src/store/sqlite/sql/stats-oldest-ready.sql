-- stats: per queue with ready jobs, the least run time of its ready jobs (oldestReadyAt; the due
-- scheduled ones are stats-due.sql's), without reading the jobs themselves. Both indexes of ready
-- jobs are in claim order: (queue, name, priority DESC, run_at, id) for the jobs without a group,
-- (queue, group_key, priority DESC, run_at, id) for the grouped ones. So the first entry of each
-- (queue, name, priority) or (queue, group, priority) has the least run time of its jobs, and the
-- query skips from one to the next, one seek each (recursive CTEs): names or groups first, then
-- the priorities in use under each. Its cost grows with the queues, names, groups and priorities
-- that have ready jobs, not with the jobs.
-- INDEXED BY on each seek: without ANALYZE, SQLite may choose a scan of the table over a partial
-- index; every seek here must stay in its index.
-- Params: none
-- Returns: queue, oldest.
-- Uses: ferry_job_counts (the queues with ready jobs), ferry_jobs_ready_by_name, ferry_jobs_ready_grouped.
WITH RECURSIVE
  queues (queue) AS (
    SELECT queue FROM ferry_job_counts WHERE state = 'ready' AND count > 0
  ),
  names (queue, name) AS (
    SELECT queue,
           (SELECT name FROM ferry_jobs INDEXED BY ferry_jobs_ready_by_name
            WHERE state = 'ready' AND group_key IS NULL AND queue = queues.queue
            ORDER BY name LIMIT 1)
    FROM queues
    UNION ALL
    SELECT queue,
           (SELECT name FROM ferry_jobs INDEXED BY ferry_jobs_ready_by_name
            WHERE state = 'ready' AND group_key IS NULL AND queue = names.queue AND name > names.name
            ORDER BY name LIMIT 1)
    FROM names WHERE name IS NOT NULL
  ),
  name_priorities (queue, name, priority) AS (
    SELECT queue, name,
           (SELECT priority FROM ferry_jobs INDEXED BY ferry_jobs_ready_by_name
            WHERE state = 'ready' AND group_key IS NULL AND queue = names.queue AND name = names.name
            ORDER BY priority DESC LIMIT 1)
    FROM names WHERE name IS NOT NULL
    UNION ALL
    SELECT queue, name,
           (SELECT priority FROM ferry_jobs INDEXED BY ferry_jobs_ready_by_name
            WHERE state = 'ready' AND group_key IS NULL AND queue = name_priorities.queue
              AND name = name_priorities.name AND priority < name_priorities.priority
            ORDER BY priority DESC LIMIT 1)
    FROM name_priorities WHERE priority IS NOT NULL
  ),
  groups (queue, group_key) AS (
    SELECT queue,
           (SELECT group_key FROM ferry_jobs INDEXED BY ferry_jobs_ready_grouped
            WHERE state = 'ready' AND group_key IS NOT NULL AND queue = queues.queue
            ORDER BY group_key LIMIT 1)
    FROM queues
    UNION ALL
    SELECT queue,
           (SELECT group_key FROM ferry_jobs INDEXED BY ferry_jobs_ready_grouped
            WHERE state = 'ready' AND group_key IS NOT NULL AND queue = groups.queue
              AND group_key > groups.group_key
            ORDER BY group_key LIMIT 1)
    FROM groups WHERE group_key IS NOT NULL
  ),
  group_priorities (queue, group_key, priority) AS (
    SELECT queue, group_key,
           (SELECT priority FROM ferry_jobs INDEXED BY ferry_jobs_ready_grouped
            WHERE state = 'ready' AND group_key IS NOT NULL AND queue = groups.queue
              AND group_key = groups.group_key
            ORDER BY priority DESC LIMIT 1)
    FROM groups WHERE group_key IS NOT NULL
    UNION ALL
    SELECT queue, group_key,
           (SELECT priority FROM ferry_jobs INDEXED BY ferry_jobs_ready_grouped
            WHERE state = 'ready' AND group_key IS NOT NULL AND queue = group_priorities.queue
              AND group_key = group_priorities.group_key AND priority < group_priorities.priority
            ORDER BY priority DESC LIMIT 1)
    FROM group_priorities WHERE priority IS NOT NULL
  ),
  firsts (queue, run_at) AS (
    SELECT queue,
           (SELECT run_at FROM ferry_jobs INDEXED BY ferry_jobs_ready_by_name
            WHERE state = 'ready' AND group_key IS NULL AND queue = name_priorities.queue
              AND name = name_priorities.name AND priority = name_priorities.priority
            ORDER BY run_at LIMIT 1)
    FROM name_priorities WHERE priority IS NOT NULL
    UNION ALL
    SELECT queue,
           (SELECT run_at FROM ferry_jobs INDEXED BY ferry_jobs_ready_grouped
            WHERE state = 'ready' AND group_key IS NOT NULL AND queue = group_priorities.queue
              AND group_key = group_priorities.group_key AND priority = group_priorities.priority
            ORDER BY run_at LIMIT 1)
    FROM group_priorities WHERE priority IS NOT NULL
  )
SELECT queue, min(run_at) AS oldest FROM firsts GROUP BY queue
