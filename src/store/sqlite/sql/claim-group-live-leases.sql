-- claim of a queue with a group concurrency limit: how many of a group's jobs hold a live lease.
-- Params: :queue, :group_key, :now
-- Returns: the count.
-- Uses: ferry_jobs_active_grouped (migrations/0008): one range, the group's live leases.
SELECT count(*) FROM ferry_jobs INDEXED BY ferry_jobs_active_grouped
WHERE state = 'active' AND group_key IS NOT NULL AND queue = :queue AND group_key = :group_key
  AND lease_expires_at > :now
