-- waitForWork and waitForJobs: a waiting worker's look at its queues, registering it for delivery
-- when given a waiter id (migrations/0007_plans_for_a_growing_table.sql, wait_for_work).
-- Params: $1 queues[]; $2 waiter id (NULL: only look), $3 limit, $4 lease_ms, $5 worker_id,
--         $6 the store's delivery channel, $7 the lock key of its listening connection
-- Returns: one row: ready (queues with a ready job), next_run_at (ms or NULL), server_now (ms),
--          stop_at (ms or NULL), registered.
-- Uses: jobs_ready and jobs_scheduled, one seek per queue.
SELECT w.ready, w.next_run_at::text AS next_run_at, w.server_now::text AS server_now, w.stop_at::text AS stop_at,
       w.registered
FROM :"schema".wait_for_work($1::text[], $2::text, $3::integer, $4::bigint, $5::text, $6::text, $7::bigint) AS w
