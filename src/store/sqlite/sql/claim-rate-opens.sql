-- claim of a queue with a rate or a group rate: when a window that holds back a ready job of the
-- queue next lets one start, for the timer of the workers that then wait (wait-for-work-next-due.sql);
-- NULL when the claim left nothing held back. Written only when it changes.
-- Params: :queue, :at
UPDATE ferry_queues SET rate_opens_at = :at WHERE queue = :queue AND rate_opens_at IS NOT :at
