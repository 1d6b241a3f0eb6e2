-- purge: deletes finished jobs, a bounded chunk per statement so no transaction grows without limit.
-- Params: :state ('completed'|'dead'), :finished_before, :queue (or NULL), :limit
-- Returns: nothing; changes counts the rows deleted.
-- Uses: ferry_jobs_finished.
DELETE FROM ferry_jobs
WHERE id IN (
  SELECT id FROM ferry_jobs
  WHERE state = :state AND finished_at IS NOT NULL AND finished_at <= :finished_before
    AND (:queue IS NULL OR queue = :queue)
  LIMIT :limit
)
