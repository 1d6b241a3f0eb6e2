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
-- Uses: the per-queue completed/dead zsets (score finishedAt): a range read per queue.
-- A dead job with a start deadline ('x') leaves its queue's expired set (prelude.lua), if it was
--   counted there; as does an entry whose hash is gone. A job without one costs nothing more.
local dead = ARGV[FIRST] ~= 'completed'
local prefix = dead and P_DEAD or P_COMPLETED
local finished_before, limit = ARGV[FIRST + 1], tonumber(ARGV[FIRST + 3])
local queues = ARGV[FIRST + 2] ~= '' and { ARGV[FIRST + 2] } or redis.call('SMEMBERS', K_QUEUES)
local deleted, looked = 0, 0
for _, queue in ipairs(queues) do
  if looked >= limit then break end
  local finished = prefix .. queue
  local ids = redis.call('ZRANGEBYSCORE', finished, '-inf', finished_before, 'LIMIT', 0, limit - looked)
  for _, id in ipairs(ids) do
    local key = P_JOB .. id
    local job = redis.call('HMGET', key, 'uk', 'x')
    local unique_key = job[1]
    if unique_key and redis.call('HGET', K_UNIQUE, unique_key) == id then
      redis.call('HDEL', K_UNIQUE, unique_key)
    end
    local gone = redis.call('DEL', key)
    deleted = deleted + gone
    if dead and (job[2] or gone == 0) then redis.call('SREM', P_EXPIRED .. queue, id) end
    redis.call('ZREM', K_JOBS, id)
    redis.call('ZREM', finished, id)
    looked = looked + 1
  end
end
return { deleted, looked }
