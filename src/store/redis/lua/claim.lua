-- claim: takes up to `limit` jobs across the named queues in strict queue order, then priority
-- (higher first), then runAt, then id, and leases them: one call, one round trip, whatever the
-- number of queues. Due scheduled jobs of those queues are promoted first (at most PROMOTE_MAX
-- per queue per call), so they take their place in line.
-- Used alone (SCRIPT 'claim') and after settle.lua in settle-and-claim.lua.
-- KEYS, ARGV 1-7: the common layout (prelude.lua).
-- ARGV (from the index given to claim_jobs): limit, leaseMs, workerId, lease token base (random,
--   from the client: each job's token is base.n), queue count, then the queues in order.
-- Returns (alone): { now, job1, job2, ... }, each job its hash as HGETALL gives it, in claim order.
-- Cost: per queue one ZRANGEBYSCORE on its scheduled zset and one ZPOPMIN on its ready zset
--   (O(log n + taken)); an empty queue costs two commands inside the script, no round trip.
local PROMOTE_MAX = 1000

local function claim_jobs(i)
  local limit, lease_ms, worker_id, token_base = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3]
  local queue_count = tonumber(ARGV[i + 4])
  local queues = {}
  for n = 1, queue_count do queues[n] = ARGV[i + 4 + n] end

  for _, queue in ipairs(queues) do
    local scheduled = P_SCHEDULED .. queue
    local due = redis.call('ZRANGEBYSCORE', scheduled, '-inf', NOW, 'LIMIT', 0, PROMOTE_MAX)
    for _, id in ipairs(due) do
      local key = P_JOB .. id
      local job = redis.call('HMGET', key, 'pr', 'ra')
      if job[1] then
        redis.call('ZADD', P_READY .. queue, -tonumber(job[1]), ready_member(job[2], id))
        redis.call('HSET', key, 's', 'ready', 'u', NOW)
      end
    end
    if #due > 0 then redis.call('ZREM', scheduled, unpack(due)) end
  end

  local lease_expires_at = NOW + lease_ms
  local claimed = {}
  for _, queue in ipairs(queues) do
    local left = limit - #claimed
    if left <= 0 then break end
    local popped = redis.call('ZPOPMIN', P_READY .. queue, left)
    for n = 1, #popped, 2 do
      local id = id_of_member(popped[n])
      local key = P_JOB .. id
      redis.call('HINCRBY', key, 'a', 1)
      redis.call('HSET', key, 's', 'active', 'lt', token_base .. '.' .. (#claimed + 1),
        'le', lease_expires_at, 'w', worker_id, 'u', NOW)
      redis.call('ZADD', K_ACTIVE, lease_expires_at, id)
      claimed[#claimed + 1] = redis.call('HGETALL', key)
    end
  end
  return claimed
end

if SCRIPT == 'claim' then
  local claimed = claim_jobs(FIRST)
  table.insert(claimed, 1, NOW)
  return claimed
end
