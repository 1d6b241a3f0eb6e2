-- recoverExpired with clampLeases, first: leases renewed at a later time than now, which only a server clock that went back
-- can show, each moved to expire its own length from now. Without this, a worker that died just
-- after a backward step would keep its job until the clock caught up (an hour's step: an hour).
-- A lease of a queue with a concurrency limit ('lq') moves in the queue's leases zset too, and one
-- counted for its group ('lg') in its group's.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- Returns: how many leases moved.
-- Uses: the active zset entries that expire after now (every lease a live worker holds: the
--   recoverer runs this at its start and after a step only).
local count = 0
for _, id in ipairs(redis.call('ZRANGEBYSCORE', K_ACTIVE, '(' .. NOW, '+inf')) do
  local key = P_JOB .. id
  local job = redis.call('HMGET', key, 's', 'le', 'u', 'q', 'lq', 'g', 'lg')
  local expires_at, leased_at = tonumber(job[2]), tonumber(job[3])
  if job[1] == 'active' and expires_at and leased_at and leased_at > NOW then
    local clamped = NOW + (expires_at - leased_at)
    redis.call('HSET', key, 'le', clamped, 'u', NOW)
    redis.call('ZADD', K_ACTIVE, clamped, id)
    if job[5] then redis.call('ZADD', P_LEASES .. job[4], clamped, id) end
    if job[7] then redis.call('ZADD', group_leases_key(job[4], job[6]), clamped, id) end
    count = count + 1
  end
end
return count
