-- claim of a queue with grouped jobs: the next group after :after, in group order, that has ready
-- jobs in the queue; from '' it gives the first (no group key is empty: core/validate.ts), and no
-- row at all tells a claim the queue has no grouped jobs to go round.
-- Params: :queue, :after
-- Returns: group_key, or no row.
-- Uses: ferry_jobs_ready_grouped (migrations/0008): one seek per group, whatever each holds.
SELECT group_key FROM ferry_jobs INDEXED BY ferry_jobs_ready_grouped
WHERE state = 'ready' AND group_key IS NOT NULL AND queue = :queue AND group_key > :after
ORDER BY group_key
LIMIT 1
