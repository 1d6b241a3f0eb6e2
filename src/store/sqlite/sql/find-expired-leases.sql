-- findExpiredLeases, and recoverExpired's first step: active jobs whose lease ran out, oldest expiry
-- first, with what fences their recovery (token and expiry) and each lease's length (a claim and a
-- renewal set updated_at to the instant they set the lease from). A read: the usual answer (none)
-- costs no write lock, which an idle worker's sweep must not take (bench idle-cpu).
-- Params: :now, :limit
-- Returns: id, lease_token, lease_expires_at, lease_ms.
-- Uses: ferry_jobs_active, read in expiry order.
SELECT id, lease_token, lease_expires_at, lease_expires_at - updated_at AS lease_ms
FROM ferry_jobs
WHERE state = 'active' AND lease_expires_at <= :now
ORDER BY lease_expires_at
LIMIT :limit
