-- claim of a queue with grouped jobs: the group it served last, where the next claim goes on from.
-- Params: :queue, :last_group
INSERT INTO ferry_group_turns (queue, last_group) VALUES (:queue, :last_group)
ON CONFLICT (queue) DO UPDATE SET last_group = excluded.last_group
