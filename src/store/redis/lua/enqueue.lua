-- enqueue: inserts a batch of jobs atomically (one script, so one AOF write and one fsync with
-- appendfsync always): lib/enqueue-core.lua's enqueue_jobs, then the wake-ups.
-- include: lib/prelude.lua, lib/namespace-check.lua, lib/groups.lua, lib/claim-core.lua, lib/deliver.lua, lib/change-job.lua, lib/enqueue-core.lua
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST..: two per job, as enqueue_jobs reads them (lib/enqueue-core.lua).
-- Returns: enqueue_jobs's first value: { now, first id, then for each job that was not created:
--   its position (1-based) and its unique key's holder }.
-- Hands ready jobs to waiting workers first (deliver.lua), then publishes 'r<queue>' per queue that
--   still has ready jobs, 's<runAt> <queue>' per queue given a scheduled one.
local results = enqueue_jobs(FIRST)
deliver_to_waiters()
publish_wakes()
return results
