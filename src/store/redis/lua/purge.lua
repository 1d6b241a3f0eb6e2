-- purge: deletes finished jobs, at most `limit` per call so no call blocks the server for long
-- (the store repeats it while a call looks at a full chunk). A purged job frees its unique key.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST: state ('completed'|'dead'), finishedBefore (epoch ms, inclusive), queue ('' for every
--   queue), limit.
-- Returns: { how many jobs were deleted, how many entries of the zsets were looked at } (the store
--   repeats while the second is `limit`): an entry whose job hash is gone (evicted) is dropped
--   from the indexes but is no job deleted.
-- Uses: the per-queue completed/dead zsets and kept zsets (score finishedAt): a range read per
--   queue and zset. Each job goes as prune's do (delete_finished, prelude.lua).
local state = ARGV[FIRST] == 'completed' and 'completed' or 'dead'
local finished_before, limit = ARGV[FIRST + 1], tonumber(ARGV[FIRST + 3])
local queues = ARGV[FIRST + 2] ~= '' and { ARGV[FIRST + 2] } or redis.call('SMEMBERS', K_QUEUES)
local deleted, looked = 0, 0
for _, queue in ipairs(queues) do
  for _, keep in ipairs({ false, true }) do
    if looked >= limit then break end
    local finished = finished_key(queue, state, keep)
    local ids = redis.call('ZRANGEBYSCORE', finished, '-inf', finished_before, 'LIMIT', 0, limit - looked)
    for _, id in ipairs(ids) do
      deleted = deleted + delete_finished(id, queue, state, keep)
      looked = looked + 1
    end
  end
end
return { deleted, looked }
