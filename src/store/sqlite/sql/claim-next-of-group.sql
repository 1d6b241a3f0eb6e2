-- claim of a queue with grouped jobs: a group's next ready job in claim order (priority, then
-- run_at, then id), of the names asked for (NULL: any), past the :skip this claim already took.
-- Params: :queue, :group_key, :names (JSON array, or NULL), :skip
-- Returns: id, or no row.
-- Uses: ferry_jobs_ready_grouped (migrations/0008), read in index order: with names, the group's
-- jobs of other names ahead are read past.
SELECT id FROM ferry_jobs INDEXED BY ferry_jobs_ready_grouped
WHERE state = 'ready' AND group_key IS NOT NULL AND queue = :queue AND group_key = :group_key
  AND (:names IS NULL OR name IN (SELECT value FROM json_each(:names)))
ORDER BY priority DESC, run_at, id
LIMIT 1 OFFSET :skip
