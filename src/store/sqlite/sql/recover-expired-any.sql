-- recoverExpired, step 1: is any lease expired? A read, so the usual answer (no) costs no write
-- lock: an idle worker's sweep took 4.5-6 ms of CPU every 10 s when it always wrote (bench
-- idle-cpu), more than the whole idle budget.
-- Params: :now
-- Returns: 1, or no row.
-- Uses: ferry_jobs_active (one seek).
SELECT 1 FROM ferry_jobs WHERE state = 'active' AND lease_expires_at <= :now LIMIT 1
