-- retry: dead jobs run again, ready now with a fresh set of attempts (the last error is kept for
-- reference).
-- KEYS, ARGV 1-7: the common layout (prelude.lua).
-- ARGV FIRST: 'ids' then the ids, or 'all' then a queue name ('' for every queue).
-- Returns: how many jobs moved.
local function revive(id, queue)
  local key = P_JOB .. id
  local priority = redis.call('HGET', key, 'pr')
  redis.call('ZREM', P_DEAD .. queue, id)
  redis.call('HDEL', key, 'f', 'r')
  redis.call('HSET', key, 's', 'ready', 'a', 0, 'ra', NOW, 'u', NOW)
  add_ready(queue, priority, NOW, id)
end

local count = 0
if ARGV[FIRST] == 'ids' then
  for i = FIRST + 1, #ARGV do
    local job = redis.call('HMGET', P_JOB .. ARGV[i], 's', 'q')
    if job[1] == 'dead' then
      revive(ARGV[i], job[2])
      count = count + 1
    end
  end
else
  local queues = ARGV[FIRST + 1] ~= '' and { ARGV[FIRST + 1] } or redis.call('SMEMBERS', K_QUEUES)
  for _, queue in ipairs(queues) do
    for _, id in ipairs(redis.call('ZRANGE', P_DEAD .. queue, 0, -1)) do
      revive(id, queue)
      count = count + 1
    end
  end
end
publish_wakes()
return count
