-- recoverExpired: active jobs whose lease ran out (leaseExpiresAt <= now), earliest first. The
-- attempt stays counted; with attempts left the job is ready again at its old runAt (its place in
-- line), otherwise it is dead. Atomic, so sweeps on many workers at once recover each job once.
-- KEYS, ARGV 1-9: the common layout (prelude.lua).
-- ARGV FIRST: limit.
-- Returns: { {retried ids}, {dead ids} }.
-- Uses: the active zset (one range read; nothing when no lease has run out). An entry whose job
--   hash is gone (evicted) is dropped (forget_job, prelude.lua).
local ids = redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', NOW, 'LIMIT', 0, tonumber(ARGV[FIRST]))
local retried, dead = {}, {}
for _, id in ipairs(ids) do
  local key = P_JOB .. id
  redis.call('ZREM', K_ACTIVE, id)
  local job = redis.call('HMGET', key, 's', 'q', 'pr', 'ra', 'a', 'ma', 'w')
  if not job[2] then
    forget_job(id)
  elseif job[1] == 'active' then
    local attempts, max_attempts = tonumber(job[5]) or 0, tonumber(job[6])
    local message = 'lease expired: worker ' .. (job[7] or '?') .. ' stopped renewing it (attempt '
      .. attempts .. ' of ' .. max_attempts .. ')'
    redis.call('HDEL', key, 'lt', 'le', 'w')
    redis.call('HSET', key, 'e', cjson.encode({ kind = 'lease_expired', message = message }), 'u', NOW)
    if attempts >= max_attempts then
      redis.call('HSET', key, 's', 'dead', 'f', NOW)
      redis.call('ZADD', P_DEAD .. job[2], NOW, id)
      dead[#dead + 1] = id
    else
      redis.call('HSET', key, 's', 'ready')
      add_ready(job[2], job[3], job[4], id)
      retried[#retried + 1] = id
    end
  end
end
publish_wakes()
return { retried, dead }
