-- claim of a queue with a rate or a group rate: forgets the starts no window counts any more.
-- Params: :queue, :before (now less the queue's longest window)
-- Uses: the primary key of ferry_queue_starts: one range.
DELETE FROM ferry_queue_starts WHERE queue = :queue AND started_at <= :before
