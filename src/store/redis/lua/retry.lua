-- retry: dead jobs run again, ready now with a fresh set of attempts (the last error is kept for
-- reference). A start deadline ('x') is dropped: an operator who runs a job again wants it run,
-- whenever that is; so the job leaves its queue's expired set, if it was counted there, and does
-- not go back into the deadlines zset (prelude.lua). A job without one costs nothing more.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST: 'ids' then the ids, or 'all' then a queue name ('' for every queue).
-- Returns: how many jobs moved. A dead zset's entry whose job hash is gone (evicted) is dropped
--   and not counted (forget_job, prelude.lua).

-- Moves a dead job of `queue` back to ready; false (and nothing written to it) when its hash is gone.
local function revive(id, queue)
  local key = P_JOB .. id
  local job = redis.call('HMGET', key, 'pr', 'q', 'n', 'x', 'g', 'k')
  redis.call('ZREM', finished_key(queue, 'dead', job[6]), id)
  if job[6] then redis.call('ZREM', K_KEPT, id) end
  if not job[2] then
    -- Which dead zset held it is unknown without its hash ('k'): it leaves both.
    redis.call('ZREM', P_DEAD .. queue, id)
    redis.call('ZREM', kept_key(queue, 'dead'), id)
    redis.call('ZREM', K_KEPT, id)
    forget_job(id)
    redis.call('SREM', P_EXPIRED .. queue, id)
    return false
  end
  if job[4] then
    redis.call('HDEL', key, 'f', 'r', 'x')
    redis.call('SREM', P_EXPIRED .. queue, id)
  else
    redis.call('HDEL', key, 'f', 'r')
  end
  redis.call('HSET', key, 's', 'ready', 'a', 0, 'ra', NOW, 'u', NOW)
  add_ready(queue, job[3], job[1], NOW, id, job[5] or nil)
  return true
end

local count = 0
if ARGV[FIRST] == 'ids' then
  for i = FIRST + 1, #ARGV do
    local job = redis.call('HMGET', P_JOB .. ARGV[i], 's', 'q')
    if job[2] and job[1] == 'dead' and revive(ARGV[i], job[2]) then count = count + 1 end
  end
else
  local queues = ARGV[FIRST + 1] ~= '' and { ARGV[FIRST + 1] } or redis.call('SMEMBERS', K_QUEUES)
  for _, queue in ipairs(queues) do
    for _, dead in ipairs({ P_DEAD .. queue, kept_key(queue, 'dead') }) do
      for _, id in ipairs(redis.call('ZRANGE', dead, 0, -1)) do
        if revive(id, queue) then count = count + 1 end
      end
    end
  end
end
publish_wakes()
return count
