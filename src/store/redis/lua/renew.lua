-- renew: extends leases, each fenced by its token. An expired but not yet recovered lease may
-- still be renewed, since nobody else can hold the job until recovery. A renewal also ends a
-- delivery for good ('dv'): renew-delivered.lua is not persisted, and one lost in a restart must
-- not make a job that ran look never taken.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- KEYS, ARGV 1-9: the common layout (prelude.lua).
-- ARGV FIRST: leaseMs; then two per lease: id, lease token.
-- Returns: { 1 (ok) | 0 (lease lost), ... } in input order. A job whose hash is gone (evicted)
--   is lease lost, and leaves the active zset and the jobs index (prelude.lua).
local lease_expires_at = NOW + tonumber(ARGV[FIRST])
local results = {}
for i = FIRST + 1, #ARGV, 2 do
  local id, key = ARGV[i], P_JOB .. ARGV[i]
  local job = redis.call('HMGET', key, 's', 'lt', 'q')
  if not job[3] then
    redis.call('ZREM', K_ACTIVE, id)
    forget_job(id)
    results[#results + 1] = 0
  elseif job[1] == 'active' and job[2] == ARGV[i + 1] then
    redis.call('HSET', key, 'le', lease_expires_at, 'u', NOW)
    redis.call('HDEL', key, 'dv')
    redis.call('ZADD', K_ACTIVE, lease_expires_at, id)
    results[#results + 1] = 1
  else
    results[#results + 1] = 0
  end
end
return results
