-- findExpiredLeases, after the expired leases: when the next lease that has not run out yet will,
-- so that the recoverer can look again right then instead of a whole interval later (a delivery
-- lease is short).
-- Params: :now
-- Returns: next_expires_at (NULL when no other job is active).
-- Uses: ferry_jobs_active (min over the index: one seek).
SELECT min(lease_expires_at) AS next_expires_at FROM ferry_jobs WHERE state = 'active' AND lease_expires_at > :now
