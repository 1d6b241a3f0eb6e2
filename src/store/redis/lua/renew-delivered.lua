-- renew with delivered: a worker takes jobs it was handed (deliver.lua) before it starts them: each gets
-- the worker's lease and stops being a delivery. Fenced by the token; a job whose delivery lease
-- ran out and was put back (or claimed again) is not this worker's any more.
-- Neither persisted nor replicated (REPL_NONE): the delivery that leased the job was, and a take
-- lost in a restart or a failover only leaves the job a delivery again (until its first renewal,
-- which is persisted and ends the delivery too: renew.lua), which recovery puts back in line.
-- That keeps an fsync off the path from an enqueue to its handler, which delivery exists to shorten.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- KEYS, ARGV 1-9: the common layout (prelude.lua).
-- ARGV FIRST: leaseMs; then two per job: id, lease token.
-- Returns: { 1 (taken) | 0 (not this worker's), ... } in input order.
redis.set_repl(redis.REPL_NONE)
local lease_expires_at = NOW + tonumber(ARGV[FIRST])
local results = {}
for i = FIRST + 1, #ARGV, 2 do
  local id, key = ARGV[i], P_JOB .. ARGV[i]
  local job = redis.call('HMGET', key, 's', 'lt', 'q')
  if job[3] and job[1] == 'active' and job[2] == ARGV[i + 1] then
    redis.call('HSET', key, 'le', lease_expires_at, 'u', NOW)
    redis.call('HDEL', key, 'dv')
    redis.call('ZADD', K_ACTIVE, lease_expires_at, id)
    results[#results + 1] = 1
  else
    results[#results + 1] = 0
  end
end
return results
