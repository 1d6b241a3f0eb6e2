-- findExpiredLeases: active jobs whose lease ran out, oldest expiry first, with what fences their
-- recovery (token and expiry), each lease's length (le - u: a claim, a renewal and a take set u to
-- the instant they set the lease from), and the server's clock. Read only.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST: limit.
-- Returns: { now, { {id, token, expiresAt, leaseMs}, ... }, the next expiry after now or '', 1 when
--   some job not started (ready or scheduled) is past its start deadline, else 0 }.
-- Uses: the active zset (two range reads); one HMGET per lease found; one range read of the
--   deadlines zset (prelude.lua).
local leases = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', NOW, 'LIMIT', 0, tonumber(ARGV[FIRST]))) do
  local job = redis.call('HMGET', P_JOB .. id, 's', 'lt', 'le', 'u')
  local expires_at, leased_at = tonumber(job[3]), tonumber(job[4])
  if job[1] == 'active' and job[2] and expires_at and leased_at then
    leases[#leases + 1] = { id, job[2], expires_at, expires_at - leased_at }
  end
end
local next = redis.call('ZRANGEBYSCORE', K_ACTIVE, '(' .. NOW, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
local deadline_passed = #redis.call('ZRANGEBYSCORE', K_DEADLINES, '-inf', NOW, 'LIMIT', 0, 1) > 0
return { NOW, leases, next[2] or '', deadline_passed and 1 or 0 }
