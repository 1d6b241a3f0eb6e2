-- recoverExpired: active jobs whose lease ran out (leaseExpiresAt <= now) go back: any of them,
-- earliest expiry first ('all'), or only the leases given ('leases'), each if still exactly as
-- seen (the same token and expiry: not renewed, not claimed again since). A job that was only
-- delivered (its waiter never took it: 'dv') is ready again with its attempt given back and its
-- last error kept: it never ran. Otherwise the attempt stays counted; with attempts left the job is
-- ready again at its old runAt (its place in line), else it is dead. Atomic, so sweeps on many
-- workers at once recover each job once.
-- With expireJobs, first: up to `limit` jobs of any queue (paused ones too) not started by their
-- start deadline end as dead, cause 'expired' (expire_jobs, prelude.lua): what no claim ends, as
-- a paused queue's or a queue nobody works. A job put back in line keeps its deadline, and is in
-- the deadlines zset again (prelude.lua).
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST: limit; FIRST + 1: '1' to expire jobs past their start deadline, else ''; FIRST + 2:
--   'all', or 'leases' then three per lease: id, token, expiry.
-- Returns: { {retried ids}, {dead ids}, {expired ids} }.
-- Publishes: 'r<queue>' for jobs back in line, and for a queue with a concurrency or group
--   concurrency limit that a recovered job makes room in (untrack_lease, prelude.lua).
-- Uses: the active zset (one range read for 'all'; nothing when no lease has run out). An entry
--   whose job hash is gone (evicted) is dropped (forget_job, prelude.lua).
local expired = ARGV[FIRST + 1] == '1' and expire_jobs(tonumber(ARGV[FIRST])) or {}
local candidates = {}
if ARGV[FIRST + 2] == 'all' then
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', NOW, 'LIMIT', 0, tonumber(ARGV[FIRST]))) do
    candidates[#candidates + 1] = { id }
  end
else
  for i = FIRST + 3, #ARGV, 3 do candidates[#candidates + 1] = { ARGV[i], ARGV[i + 1], ARGV[i + 2] } end
end
local retried, dead = {}, {}
for _, candidate in ipairs(candidates) do
  local id = candidate[1]
  local key = P_JOB .. id
  local job = redis.call('HMGET', key, 's', 'q', 'pr', 'ra', 'a', 'ma', 'w', 'lt', 'le', 'dv', 'n', 'lq', 'x', 'g',
    'lg', 'k')
  local group = job[14] or nil
  local expires_at = tonumber(job[9])
  if not job[2] then
    redis.call('ZREM', K_ACTIVE, id)
    forget_job(id)
  elseif job[1] == 'active' and expires_at and expires_at <= NOW
    and (candidate[2] == nil or (job[8] == candidate[2] and expires_at == tonumber(candidate[3]))) then
    redis.call('ZREM', K_ACTIVE, id)
    if job[12] then untrack_lease(key, job[2], id) end
    if job[15] then untrack_group_lease(key, job[2], group, id) end
    redis.call('HDEL', key, 'lt', 'le', 'w', 'dv')
    if job[10] then
      redis.call('HINCRBY', key, 'a', -1)
      redis.call('HSET', key, 's', 'ready', 'u', NOW)
      add_ready(job[2], job[11], job[3], job[4], id, group)
      if job[13] then track_deadline(id, job[13]) end
      retried[#retried + 1] = id
    else
      local attempts, max_attempts = tonumber(job[5]) or 0, tonumber(job[6])
      local message = 'lease expired: worker ' .. (job[7] or '?') .. ' stopped renewing it (attempt '
        .. attempts .. ' of ' .. max_attempts .. ')'
      redis.call('HSET', key, 'e', cjson.encode({ kind = 'lease_expired', message = message }), 'u', NOW)
      if attempts >= max_attempts then
        redis.call('HSET', key, 's', 'dead', 'f', NOW)
        free_unique_key_at_end(key, id)
        add_finished(job[2], id, 'dead', job[16])
        dead[#dead + 1] = id
      else
        redis.call('HSET', key, 's', 'ready')
        add_ready(job[2], job[11], job[3], job[4], id, group)
        if job[13] then track_deadline(id, job[13]) end
        retried[#retried + 1] = id
      end
    end
  elseif job[1] ~= 'active' and candidate[2] == nil then
    -- Settled or cancelled without leaving the active zset (an older layout): not active any more.
    redis.call('ZREM', K_ACTIVE, id)
  end
end
publish_wakes()
return { retried, dead, expired }
