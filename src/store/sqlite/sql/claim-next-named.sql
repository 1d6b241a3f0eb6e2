-- claim, step 2, run once per (queue, name) in the worker's queue order: the next ready jobs of
-- one name in one queue, in claim order, with what the store merges them by (priority, then
-- run_at, then id) into the queue's claim order over all the names asked for (a claim without a
-- names filter asks for every name with ready jobs there: claim-ready-names.sql).
-- Params: :queue, :name, :limit
-- Returns: id, priority, run_at, in claim order.
-- Jobs with a group are not here: claim-rows.ts takes them round their groups (claim-next-group.sql).
-- Uses: ferry_jobs_ready_by_name (migrations/0003, of the jobs without a group since 0008), read in index order: the cost is the rows
-- taken, not the backlog, and not the ready jobs of other names in the queue. INDEXED BY, so no
-- plan can read past the jobs of other names ahead, whatever statistics an ANALYZE left.
SELECT id, priority, run_at FROM ferry_jobs INDEXED BY ferry_jobs_ready_by_name
WHERE state = 'ready' AND group_key IS NULL AND queue = :queue AND name = :name
ORDER BY priority DESC, run_at, id
LIMIT :limit
