-- renew: extends leases, each fenced by its token. An expired but not yet recovered lease may
-- still be renewed, since nobody else can hold the job until recovery. Every renewal ends a
-- delivery for good ('dv').
-- With delivered, a worker takes jobs it was handed (lib/deliver.lua) before it starts them: each
-- gets the worker's lease and stops being a delivery; a job whose delivery lease ran out and was
-- put back (or claimed again) is not this worker's any more. That take is neither persisted nor
-- replicated (REPL_NONE): the delivery that leased the job was, and a take lost in a restart or a
-- failover only leaves the job a delivery again (until its first plain renewal, which is persisted
-- and ends the delivery too), which recovery puts back in line. That keeps an fsync off the path
-- from an enqueue to its handler, which delivery exists to shorten. So that it writes nothing
-- else, a take leaves a job whose hash is gone to the next plain renewal or recovery.
-- A job of a queue with a concurrency limit ('lq') moves its entry in the queue's leases zset too
-- (prelude.lua, track_lease), so that its limit counts the lease as long as it lives; one of a
-- queue with a group concurrency limit ('lg') its entry in its group's (track_group_lease).
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- With a plain renewal, what the handler reported since the last one (store/kernel/job-reports.ts):
-- the latest progress ('pg') and the whole log tail ('lo'), written only if the lease is renewed.
-- ARGV FIRST: leaseMs; FIRST + 1: delivered ('1' | '0'); then four per lease: id, lease token,
--   progress (JSON text, '' to keep the stored one), logs (JSON array text, '' to keep them).
-- Returns: { 1 (ok) | 0 (lease lost), ... } in input order. A job whose hash is gone (evicted)
--   is lease lost, and leaves the active zset and the jobs index (prelude.lua).
local delivered = ARGV[FIRST + 1] == '1'
if delivered then
  redis.set_repl(redis.REPL_NONE)
end
local lease_expires_at = NOW + tonumber(ARGV[FIRST])
local results = {}
for i = FIRST + 2, #ARGV, 4 do
  local id, key = ARGV[i], P_JOB .. ARGV[i]
  local job = redis.call('HMGET', key, 's', 'lt', 'q', 'lq', 'g', 'lg')
  if not job[3] then
    if not delivered then
      redis.call('ZREM', K_ACTIVE, id)
      forget_job(id)
    end
    results[#results + 1] = 0
  elseif job[1] == 'active' and job[2] == ARGV[i + 1] then
    redis.call('HSET', key, 'le', lease_expires_at, 'u', NOW)
    redis.call('HDEL', key, 'dv')
    if ARGV[i + 2] ~= '' then redis.call('HSET', key, 'pg', ARGV[i + 2]) end
    if ARGV[i + 3] ~= '' then redis.call('HSET', key, 'lo', ARGV[i + 3]) end
    redis.call('ZADD', K_ACTIVE, lease_expires_at, id)
    if job[4] then redis.call('ZADD', P_LEASES .. job[3], lease_expires_at, id) end
    if job[6] then redis.call('ZADD', group_leases_key(job[3], job[5]), lease_expires_at, id) end
    results[#results + 1] = 1
  else
    results[#results + 1] = 0
  end
end
return results
