-- claim: promotes due scheduled jobs and leases the next ready ones over every queue given, in one
-- call (migrations/0001_init.sql, claim: FOR UPDATE SKIP LOCKED under a per-queue LIMIT, read from
-- jobs_ready in claim order).
-- Params: $1 queues[] (strict order), $2 limit, $3 lease_ms, $4 worker_id, $5 now (ms or NULL)
-- Returns: the leased rows in claim order.
SELECT * FROM :"schema".claim($1::text[], $2::integer, $3::bigint, $4::text, $5::bigint)
