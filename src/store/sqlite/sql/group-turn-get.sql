-- claim of a queue with grouped jobs: the group the last claim served ('' for the jobs without one).
-- Params: :queue
-- Returns: last_group, or no row when no claim has gone round the queue's groups yet.
SELECT last_group FROM ferry_group_turns WHERE queue = :queue
