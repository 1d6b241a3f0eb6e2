-- recoverExpired with clampLeases, in a transaction of its own before the recovery: leases renewed
-- at a later time than :now, which only a clock that went back can show (this host's, or a
-- process's whose clock is ahead of this one's), each moved to expire its own length from :now.
-- Without this, a worker that died just after a backward step would keep its job until the clock
-- caught up (an hour's step: an hour).
-- Params: :now
-- Returns: nothing; changes counts the leases moved.
-- Uses: ferry_jobs_active (every active job: the worker runs it at start and after a step only).
UPDATE ferry_jobs
SET lease_expires_at = :now + (lease_expires_at - updated_at), updated_at = :now
WHERE state = 'active' AND updated_at > :now
