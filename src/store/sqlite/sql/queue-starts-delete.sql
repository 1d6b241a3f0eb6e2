-- queue control: forgets a queue's starts once it has no rate left to count them.
-- Params: :queue
DELETE FROM ferry_queue_starts WHERE queue = :queue
