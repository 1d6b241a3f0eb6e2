-- renew: extends a lease. Fenced by the lease token; an expired but not yet recovered lease may
-- still be renewed, since nobody else can hold the job until recovery.
-- Params: :id, :lease_token, :lease_expires_at, :now
-- Returns: nothing; changes = 0 means the lease was lost.
UPDATE ferry_jobs SET lease_expires_at = :lease_expires_at, updated_at = :now
WHERE id = :id AND state = 'active' AND lease_token = :lease_token
