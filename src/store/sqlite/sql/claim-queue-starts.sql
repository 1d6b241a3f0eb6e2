-- claim of a queue with a rate: the starts its window still counts (those after :since), newest
-- first, no more than the limit (all a claim needs to know how many more may start, and when).
-- Params: :queue, :since, :limit
-- Returns: started_at, newest first.
-- Uses: the primary key of ferry_queue_starts (migrations/0008).
SELECT started_at FROM ferry_queue_starts
WHERE queue = :queue AND started_at > :since
ORDER BY started_at DESC
LIMIT :limit
