-- queue control: forgets a queue a change left without any setting.
-- Params: :queue
DELETE FROM ferry_queues WHERE queue = :queue
