-- claim that left a ready job because of a rate: when a window next lets one start, for the timer
-- of the workers that then wait (wait-for-work-next-due.sql).
-- Params: :queue, :at
UPDATE ferry_queues SET rate_opens_at = :at WHERE queue = :queue
