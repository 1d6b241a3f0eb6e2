-- claim: promotes due scheduled jobs and leases the next ready ones over every queue given, in one
-- call (functions/claim.sql: FOR UPDATE SKIP LOCKED under a per-queue LIMIT,
-- read from jobs_ready in claim order, or with names from jobs_ready_by_name, one range per name).
-- Params: $1 queues[] (strict order), $2 limit, $3 lease_ms, $4 worker_id, $5 now (ms or NULL),
--         $6 the lease tokens' random base, $7 names[] (only jobs of these names; NULL: every name)
-- Returns: the leased rows in claim order.
SELECT * FROM :"schema".claim($1::text[], $2::integer, $3::bigint, $4::text, $5::bigint, $6::text, false, $7::text[])
