-- prune: deletes a queue's oldest finished jobs of a state before a bound (finish time, then id),
-- a batch at most: the jobs past the queue's age, or beyond its count. Deleting the row frees
-- its unique key, as purge does.
-- Params: :state, :queue, :before_at, :before_id (the bound: jobs with finished_at < before_at, or
--   = before_at and id < before_id, go), :limit
-- Returns: nothing; changes counts the rows deleted.
-- Uses: ferry_jobs_retention: a range from the queue's oldest, in index order (no sort).
-- Measured (1,000,000 finished jobs in 5 queues, durability full, the shared 2-core machine at load
-- 2-5, 2026-12-07): a batch of 1,000 deletes took 5-10 ms, committed; a batch cut by a count limit
-- of 10,000 (OFFSET 9,999) 4.9 ms. A prune that finds nothing past its retention runs no delete
-- (prune-queues.sql reads each queue's oldest first): 0.2-0.4 ms, a read, the WAL unchanged.
DELETE FROM ferry_jobs
WHERE id IN (
  SELECT id FROM ferry_jobs
  WHERE state = :state AND queue = :queue AND finished_at IS NOT NULL AND keep_for_ms IS NULL
    AND finished_at <= :before_at AND (finished_at < :before_at OR id < :before_id)
  ORDER BY finished_at, id
  LIMIT :limit
)
