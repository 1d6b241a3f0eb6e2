-- waitForWork and waitForJobs: what a waiting worker needs to know when it starts listening, after
-- its listening connection came back, and at each safety-net check: which of its queues have ready
-- work (it may have missed their notifications), and the earliest run time of their scheduled jobs
-- (for the 'due' timer), with the server's clock to translate that time to this host's, and the time
-- of the last stop request (a waiter must wake for a new one even if it missed its notification).
-- With a waiter id ($2), the same statement registers the waiter for delivery
-- (migrations/0003_delivery.sql) unless it is to wake at once (ready or due work): looked at and
-- registered in one snapshot, after its store's LISTEN, so a job committed after the snapshot is
-- either delivered to it or notified to it.
-- Params: $1 queues[]; $2 waiter id (NULL: only look), $3 limit, $4 lease_ms, $5 worker_id,
--         $6 the store's delivery channel, $7 the lock key of its listening connection
-- Returns: one row: ready (queues with a ready job), next_run_at (ms or NULL), server_now (ms),
--          stop_at (ms or NULL), registered.
-- Uses: jobs_ready and jobs_scheduled, one seek per queue. Writes nothing without a waiter id, and
-- with one only to the UNLOGGED waiters table (no WAL flush at commit).
WITH found AS (
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
), registered AS (
  INSERT INTO :"schema".waiters (id, queues, lim, lease_ms, worker_id, channel, lock_key, registered_at)
  SELECT $2::text, $1::text[], $3::integer, $4::bigint, $5::text, $6::text, $7::bigint, f.server_now
  FROM found AS f
  WHERE $2::text IS NOT NULL AND cardinality(f.ready) = 0
    AND (f.next_run_at IS NULL OR f.next_run_at > f.server_now)
  RETURNING 1
)
SELECT f.ready, f.next_run_at, f.server_now, f.stop_at, EXISTS (SELECT 1 FROM registered) AS registered
FROM found AS f
