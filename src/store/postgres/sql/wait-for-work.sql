-- waitForWork, with or without a claim: a waiting worker's look at its queues, registering it for delivery
-- when given a waiter id (functions/wait-for-work.sql).
-- Params: $1 queues[]; $2 waiter id (NULL: only look), $3 limit, $4 lease_ms, $5 worker_id,
--         $6 the store's delivery channel, $7 the lock key of its listening connection,
--         $8 names[] (only ready jobs of these names count; NULL: every name)
-- Returns: one row: ready (queues with a ready job), next_run_at (ms or NULL), server_now (ms),
--          stop_at (ms or NULL), registered, schedules_version (NULL before the first change of a
--          schedule): the store compares the last two with what it knew of, to catch a stop request
--          or a change of schedules notified before it listened.
-- Uses: jobs_ready (or jobs_ready_by_name, one seek per queue and name) and jobs_scheduled, one
--       seek per queue.
SELECT w.ready, w.next_run_at::text AS next_run_at, w.server_now::text AS server_now, w.stop_at::text AS stop_at,
       w.registered, (SELECT c.at FROM :"schema".control AS c WHERE c.key = 'schedules')::text AS schedules_version
FROM :"schema".wait_for_work($1::text[], $2::text, $3::integer, $4::bigint, $5::text, $6::text, $7::bigint,
                             $8::text[]) AS w
