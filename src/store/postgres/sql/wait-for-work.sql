-- waitForWork: what a waiting worker needs to know when it starts listening, after its listening
-- connection came back, and at each safety-net check: which of its queues have ready work (it may
-- have missed their notifications), and the earliest run time of their scheduled jobs (for the
-- 'due' timer), with the server's clock to translate that time to this host's, and the time of the
-- last stop request (a waiter must wake for a new one even if it missed its notification).
-- Params: $1 queues[]
-- Returns: one row: ready (queues with a ready job), next_run_at (ms or NULL), server_now (ms),
--          stop_at (ms or NULL).
-- Uses: jobs_ready and jobs_scheduled, one seek per queue.
SELECT
  ARRAY(
    SELECT q.name FROM unnest($1::text[]) AS q(name)
    WHERE EXISTS (SELECT 1 FROM :"schema".jobs AS j WHERE j.state = 'ready' AND j.queue = q.name)
  ) AS ready,
  (SELECT min(n.run_at) FROM unnest($1::text[]) AS q(name)
   CROSS JOIN LATERAL (
     SELECT j.run_at FROM :"schema".jobs AS j WHERE j.state = 'scheduled' AND j.queue = q.name
     ORDER BY j.run_at LIMIT 1
   ) AS n) AS next_run_at,
  :"schema".now_ms() AS server_now,
  (SELECT c.at FROM :"schema".control AS c WHERE c.key = 'stop') AS stop_at
