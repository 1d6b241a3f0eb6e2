-- claim of a queue with a group rate: the starts a group's window still counts, newest first, no
-- more than the limit.
-- Params: :queue, :group_key, :since, :limit
-- Returns: started_at, newest first.
-- Uses: ferry_queue_starts_by_group (migrations/0008).
SELECT started_at FROM ferry_queue_starts INDEXED BY ferry_queue_starts_by_group
WHERE queue = :queue AND group_key = :group_key AND started_at > :since
ORDER BY started_at DESC
LIMIT :limit
