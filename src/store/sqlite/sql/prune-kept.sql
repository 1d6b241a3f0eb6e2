-- prune: deletes finished jobs whose own keepForMs has run out, earliest first, a batch at most.
-- Params: :now, :limit
-- Returns: nothing; changes counts the rows deleted.
-- Uses: ferry_jobs_kept (a range from its start: nothing is read past the jobs deleted).
DELETE FROM ferry_jobs
WHERE id IN (
  SELECT id FROM ferry_jobs
  WHERE finished_at IS NOT NULL AND keep_for_ms IS NOT NULL AND finished_at + keep_for_ms <= :now
  ORDER BY finished_at + keep_for_ms
  LIMIT :limit
)
