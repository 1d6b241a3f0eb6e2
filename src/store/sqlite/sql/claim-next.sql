-- claim, step 2, run once per queue in the worker's order until the limit is reached: the ids of
-- the next ready jobs of one queue, in claim order. A read only, so an empty queue costs one
-- index seek: bench claim-latency [normal], 1,000,000 ready, limit 1: with one UPDATE … WHERE id IN
-- (subquery) per queue a claim took 0.080 ms and each empty queue before the full one added 26 µs;
-- selecting ids per queue, then one UPDATE for all, takes 0.055 ms and 4.5 µs per empty queue.
-- Params: :queue, :limit
-- Returns: id, in claim order.
-- Uses: ferry_jobs_ready, read in index order: the cost is the rows taken, not the backlog.
SELECT id FROM ferry_jobs
WHERE state = 'ready' AND queue = :queue
ORDER BY priority DESC, run_at, id
LIMIT :limit
